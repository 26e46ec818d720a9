package cli

import (
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/testenv"
)

// TestAppGolden prints fixed Applications from the cluster.
func TestAppGolden(t *testing.T) {
	ns, c := appCluster(t)
	createFixtures(t, c, ns)
	tests := map[string]struct {
		args   []string
		golden string
	}{
		"list":                          {[]string{"list"}, "app-list.txt"},
		"list filtered":                 {[]string{"list", "-p", "team-a", "--health", "degraded"}, "app-list-filtered.txt"},
		"list by label as names":        {[]string{"list", "-l", "app.kubernetes.io/instance=root", "-o", "name"}, "app-list-name.txt"},
		"list as json":                  {[]string{"list", "-l", "team=a", "-o", "json"}, "app-list-json.json"},
		"get nests child apps":          {[]string{"get", "root"}, "app-get-root.txt"},
		"get as a tree":                 {[]string{"get", "root", "-o", "tree"}, "app-get-root-tree.txt"},
		"get with hooks and conditions": {[]string{"get", "child-a"}, "app-get-child-a.txt"},
		"get multi-source":              {[]string{"get", "broken"}, "app-get-broken.txt"},
		"get as yaml":                   {[]string{"get", "guestbook", "-o", "yaml"}, "app-get-guestbook.yaml"},
		"get qualified name":            {[]string{"get", ns + "/guestbook", "-o", "wide"}, "app-get-guestbook.txt"},
		"history":                       {[]string{"history", "guestbook"}, "app-history.txt"},
		"history ids":                   {[]string{"history", "guestbook", "-o", "id"}, "app-history-id.txt"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := runApp(t, ns, tc.args...)
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			assertGolden(t, tc.golden, normalize(out, ns))
		})
	}
	// -N names the namespace of NAME's app, whatever -n says, as the
	// argocd CLI's --app-namespace.
	t.Run("get with its namespace by -N", func(t *testing.T) {
		out, errOut, err := runCLI(t, "app", "get", "guestbook", "-N", ns, "-o", "wide", "--kubeconfig", testenv.Get(t).Kubeconfig, "-n", "default")
		if err != nil {
			t.Fatalf("%v\nstderr: %s", err, errOut)
		}
		assertGolden(t, "app-get-guestbook.txt", normalize(out, ns))
	})
}

// TestAppHelp keeps the help of the app commands readable.
func TestAppHelp(t *testing.T) {
	for _, cmd := range []string{"list", "get", "sync", "wait", "create", "set", "delete", "rollback", "history", "terminate-op"} {
		t.Run(cmd, func(t *testing.T) {
			out, _, err := runCLI(t, "app", cmd, "--help")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Usage:", "Examples:", "--kubeconfig", "--namespace"} {
				if !strings.Contains(out, want) {
					t.Errorf("help of app %s lacks %q", cmd, want)
				}
			}
		})
	}
}
