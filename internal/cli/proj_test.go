package cli

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestProjWindowsGolden lists the sync windows of a project read from the
// cluster, as of a fixed time: Monday 2026-01-05 09:30 UTC.
func TestProjWindowsGolden(t *testing.T) {
	ns, c := appCluster(t)
	raw, err := os.ReadFile("testdata/proj/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{}
	if err := yaml.UnmarshalStrict(raw, proj); err != nil {
		t.Fatal(err)
	}
	proj.Namespace = ns
	if err := c.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	env := testenv.Get(t)
	for _, output := range []string{"wide", "json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			out, errOut, err := runCLI(t, "proj", "windows", "list", "team", "--at", "2026-01-05T09:30:00Z", "-o", output,
				"--kubeconfig", env.Kubeconfig, "-n", ns)
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			ext := map[string]string{"wide": "txt", "json": "json", "yaml": "yaml"}[output]
			assertGolden(t, "proj-windows-list."+ext, out)
		})
	}
	t.Run("unknown project", func(t *testing.T) {
		_, _, err := runCLI(t, "proj", "windows", "list", "nope", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err == nil || !strings.Contains(err.Error(), "read AppProject "+ns+"/nope") {
			t.Errorf("error = %v, want the missing project named", err)
		}
	})
	t.Run("bad --at", func(t *testing.T) {
		_, _, err := runCLI(t, "proj", "windows", "list", "team", "--at", "tonight", "--kubeconfig", env.Kubeconfig, "-n", ns)
		if err == nil || !strings.Contains(err.Error(), "--at") {
			t.Errorf("error = %v, want --at rejected", err)
		}
	})
}
