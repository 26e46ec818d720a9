package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/shard"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestAdminShardsGolden lists the shards of three live replicas (a
// fourth's Lease expired) over the apps of testdata/shards: pins by
// annotation and by cluster Secret land on their replicas.
func TestAdminShardsGolden(t *testing.T) {
	ns, c := appCluster(t)
	raw, err := os.ReadFile("testdata/shards/apps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	renewed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, name := range []string{"controller-b", "controller-a", "controller-c", "controller-gone"} {
		at := renewed
		if name == "controller-gone" {
			at = renewed.Add(-time.Minute)
		}
		secs := int32(15)
		rt := metav1.NewMicroTime(at.Add(-time.Duration(i) * time.Second))
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: shard.LeaseName(name),
				Labels: map[string]string{shard.LabelReplica: "true"}, Annotations: map[string]string{shard.AnnotationAssignment: "stale"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &secs, RenewTime: &rt},
		}
		if err := c.Create(t.Context(), lease); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := listShards(t.Context(), c, application.Namespaces{Control: ns}, renewed.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, output string
		apps         bool
	}{
		{"admin-shards.txt", "wide", false},
		{"admin-shards-apps.txt", "wide", true},
		{"admin-shards.yaml", "yaml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printShards(&out, tc.output, tc.apps, shards, renewed.Add(3*time.Second)); err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.name, out.String())
		})
	}
}

// TestAdminShardsNone explains an install without sharding.
func TestAdminShardsNone(t *testing.T) {
	ns, _ := appCluster(t)
	env := testenv.Get(t)
	_, errOut, err := runCLI(t, "admin", "shards", "--kubeconfig", env.Kubeconfig, "-n", ns)
	if err == nil || !strings.Contains(err.Error()+errOut, "no live controller replica in namespace "+ns) {
		t.Errorf("admin shards without replicas: err %v, stderr %q; want it to say there is no live replica", err, errOut)
	}
}
