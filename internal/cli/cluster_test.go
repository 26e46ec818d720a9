package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/testenv"
)

// serverVersion matches the local cluster's version, which follows the
// Kubernetes release localcluster builds.
var serverVersion = regexp.MustCompile(`v\d+\.\d+\.\d+[^"\s]*`)

// TestClusterListGolden lists the implicit in-cluster destination (the
// test cluster, reached with the kubeconfig) and two registered clusters
// that cannot answer: one refuses connections, one needs AWS
// authentication wavecd does not offer.
func TestClusterListGolden(t *testing.T) {
	ns, c := appCluster(t)
	createClusterSecrets(t, c, ns)
	env := testenv.Get(t)
	t.Run("json", func(t *testing.T) {
		out, errOut, err := runCLI(t, "cluster", "list", "-o", "json", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err != nil {
			t.Fatalf("%v\nstderr: %s", err, errOut)
		}
		assertGolden(t, "cluster-list.json", serverVersion.ReplaceAllString(out, "v1.X.Y"))
	})
	t.Run("wide", func(t *testing.T) {
		// The table's widths follow the version: print it fixed.
		rows, err := (&clusterList{Home: c, Local: env.Config, Namespace: ns}).Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].Version = serverVersion.ReplaceAllString(rows[i].Version, "v1.X.Y")
		}
		var out bytes.Buffer
		if err := printClusters(&out, "wide", rows); err != nil {
			t.Fatal(err)
		}
		assertGolden(t, "cluster-list.txt", out.String())
	})
	clusterRmCases(t, c, ns)
}

// clusterRmCases removes clusters of TestClusterListGolden's fixtures.
func clusterRmCases(t *testing.T, c client.Client, ns string) {
	env := testenv.Get(t)
	t.Run("rm of the implicit in-cluster destination", func(t *testing.T) {
		_, _, err := runCLI(t, "cluster", "rm", "in-cluster", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err == nil || !strings.Contains(err.Error(), "has no Secret to remove") {
			t.Errorf("error = %v, want a refusal", err)
		}
	})
	t.Run("rm of an unknown cluster", func(t *testing.T) {
		_, _, err := runCLI(t, "cluster", "rm", "https://nowhere.example.com", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err == nil || !strings.Contains(err.Error(), "no cluster is registered for server https://nowhere.example.com") {
			t.Errorf("error = %v, want the server named", err)
		}
	})
	t.Run("rm by name", func(t *testing.T) {
		out, errOut, err := runCLI(t, "cluster", "rm", "eks", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err != nil {
			t.Fatalf("%v\nstderr: %s", err, errOut)
		}
		assertGolden(t, "cluster-rm.txt", out)
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cluster-aws"}, &corev1.Secret{}); err == nil {
			t.Error("the cluster Secret is still there")
		}
	})
}

// TestClusterAndProjHelp keeps the help of the new commands readable.
func TestClusterAndProjHelp(t *testing.T) {
	for _, args := range [][]string{{"cluster", "add"}, {"cluster", "list"}, {"cluster", "rm"}, {"proj", "windows", "list"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _, err := runCLI(t, append(args, "--help")...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Usage:", "Examples:", "--kubeconfig", "--namespace"} {
				if !strings.Contains(out, want) {
					t.Errorf("help of %s lacks %q", strings.Join(args, " "), want)
				}
			}
		})
	}
}

// createClusterSecrets creates the cluster Secrets of
// testdata/cluster/secrets.yaml in ns.
func createClusterSecrets(t *testing.T, c client.Client, ns string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "cluster", "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		s := &corev1.Secret{}
		if err := dec.Decode(s); err != nil {
			break
		}
		s.Namespace = ns
		if err := c.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
}
