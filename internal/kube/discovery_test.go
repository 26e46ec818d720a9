package kube

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/wavecd/wavecd/internal/testenv"
)

func TestSemanticVersion(t *testing.T) {
	for name, tc := range map[string]struct {
		info    version.Info
		want    string
		wantErr bool
	}{
		"release":                  {info: version.Info{GitVersion: "v1.31.2", Major: "1", Minor: "31"}, want: "v1.31.2"},
		"provider build kept":      {info: version.Info{GitVersion: "v1.30.4-eks-a737599", Major: "1", Minor: "30+"}, want: "v1.30.4-eks-a737599"},
		"build metadata kept":      {info: version.Info{GitVersion: "v1.29.1+k3s1", Major: "1", Minor: "29"}, want: "v1.29.1+k3s1"},
		"without v":                {info: version.Info{GitVersion: "1.28.0", Major: "1", Minor: "28"}, want: "v1.28.0"},
		"unstamped build":          {info: version.Info{GitVersion: "v0.0.0-master+$Format:%H$", Major: "1", Minor: "36"}, want: "v1.36.0"},
		"unstamped, minor with +":  {info: version.Info{GitVersion: "v0.0.0-master+$Format:%H$", Major: "1", Minor: "30+"}, want: "v1.30.0"},
		"not semantic":             {info: version.Info{GitVersion: "v1.30", Major: "1", Minor: "30"}, want: "v1.30.0"},
		"nothing usable":           {info: version.Info{GitVersion: "v0.0.0-master+$Format:%H$"}, wantErr: true},
		"zero major and minor":     {info: version.Info{GitVersion: "garbage", Major: "0", Minor: "0"}, wantErr: true},
		"major and minor not ints": {info: version.Info{GitVersion: "x", Major: "one", Minor: "two"}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := SemanticVersion(&tc.info)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("SemanticVersion(%+v) = %q, %v; want %q (error: %v)", tc.info, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestServerVersionIsSemantic: the local cluster reports its Kubernetes
// release, and ServerVersion hands it on as Helm needs it.
func TestServerVersionIsSemantic(t *testing.T) {
	c, err := New(testenv.Get(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v == "" || v[:3] != "v1." {
		t.Errorf("ServerVersion = %q, want a v1.x release", v)
	}
}

// TestAPIVersionsFollowCRDs: the API versions list group/versions and
// group/version/Kinds as Argo CD hands them to Helm, sorted, without
// subresources; the watch of CRDs reports a new one, and discovery then
// lists its kind.
func TestAPIVersionsFollowCRDs(t *testing.T) {
	env := testenv.Get(t)
	c, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.APIVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"v1", "v1/Pod", "apps/v1", "apps/v1/Deployment", "policy/v1/PodDisruptionBudget", "apiextensions.k8s.io/v1/CustomResourceDefinition"} {
		if !slices.Contains(before, want) {
			t.Errorf("API versions lack %s", want)
		}
	}
	for _, sub := range []string{"v1/Scale", "v1/Eviction", "apps/v1/Scale", "v1/TokenRequest"} {
		if slices.Contains(before, sub) {
			t.Errorf("API versions list %s, the kind of a subresource only", sub)
		}
	}
	if !slices.IsSorted(before) {
		t.Error("API versions are not sorted")
	}

	var changes atomic.Int32
	w, err := c.WatchCRDs(t.Context(), func() { changes.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the first listing
	listed := changes.Load()
	group := fmt.Sprintf("caps-%d.example.com", time.Now().UnixNano())
	crd := testenv.CRD(group, "Widget", nil)
	if _, err := env.Dynamic.Resource(crdResource).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Dynamic.Resource(crdResource).Delete(t.Context(), crd.GetName(), metav1.DeleteOptions{})
	})
	testenv.Eventually(t, 10*time.Second, "the watch to report the new CRD established", func() bool {
		return changes.Load() > listed && slices.Contains(w.Served(), group+"/v1/Widget") && slices.Contains(w.Served(), group+"/v1")
	})
	testenv.Eventually(t, 10*time.Second, "discovery to list "+group+"/v1/Widget", func() bool {
		after, err := c.APIVersions()
		return err == nil && slices.Contains(after, group+"/v1") && slices.Contains(after, group+"/v1/Widget")
	})
	if err := env.Dynamic.Resource(crdResource).Delete(t.Context(), crd.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the watch to forget the deleted CRD", func() bool {
		return !slices.Contains(w.Served(), group+"/v1/Widget")
	})
}
