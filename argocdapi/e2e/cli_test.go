package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mode is how the CLI reaches the server.
type mode struct {
	name  string
	addr  func() string
	flags []string
}

var modes = []mode{
	{name: "grpc over TLS", addr: func() string { return env.tlsAddr }, flags: []string{"--insecure"}},
	{name: "grpc-web over TLS", addr: func() string { return env.tlsAddr }, flags: []string{"--insecure", "--grpc-web"}},
	{name: "grpc over plain HTTP/2", addr: func() string { return env.plainAddr }, flags: []string{"--plaintext"}},
}

// argocd runs the argocd CLI with its own config file, in mode m; it
// returns the output and the exit code.
func argocd(t *testing.T, m mode, config string, args ...string) (string, int) {
	t.Helper()
	full := append(append([]string{"--config", config, "--server", m.addr()}, m.flags...), args...)
	cmd := exec.Command(env.argocd, full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("run argocd %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), 0
}

// step is one command of the matrix: its exit code and what its output
// must match, as Argo CD's would.
type step struct {
	args []string
	exit int
	want string // a regular expression
}

// TestCLI runs the argocd CLI's commands, in order, against wavecd in
// each mode, and checks each exit code and the shape of each output.
func TestCLI(t *testing.T) {
	if err := createAppSet(); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { runSteps(t, m) })
	}
}

func runSteps(t *testing.T, m mode) {
	config := filepath.Join(t.TempDir(), "config")
	steps := []step{
		{args: []string{"login", m.addr(), "--username", "admin", "--password", env.adminPassword}, want: `'admin:login' logged in successfully`},
		{args: []string{"login", m.addr(), "--username", "admin", "--password", "wrong"}, exit: 20, want: `Invalid username or password`},
		{args: []string{"version"}, want: `(?s)argocd: v.*argocd-server: `},
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: admin\nIssuer: argocd`},
		{args: []string{"account", "list"}, want: `NAME +ENABLED +CAPABILITIES\nadmin +true +login`},
		{args: []string{"account", "update-password", "--current-password", env.adminPassword, "--new-password", env.adminPassword + "-2"},
			want: `Password updated\nContext '` + regexp.QuoteMeta(m.addr()) + `' updated`}, // and the CLI signed in again
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: admin`},
		{args: []string{"account", "update-password", "--current-password", "wrong-password", "--new-password", env.adminPassword},
			exit: 20, want: `current password does not match`},
		{args: []string{"account", "update-password", "--current-password", env.adminPassword + "-2", "--new-password", env.adminPassword},
			want: `Password updated`},
		{args: []string{"proj", "get", "default"}, want: `Destinations: +\*,\*`}, // the server made it, as argocd-server does
		{args: []string{"proj", "create", "shop", "--src", "https://git.example/shop.git", "--dest", "https://kubernetes.default.svc,shop"}},
		{args: []string{"proj", "list"}, want: `(?m)^shop +https://kubernetes.default.svc,shop +https://git.example/shop.git`},
		{args: []string{"proj", "get", "shop"}, want: `Name: +shop\n`},
		{args: []string{"proj", "windows", "list", "shop"}, want: `ID +STATUS +KIND +SCHEDULE`},
		{args: []string{"proj", "windows", "add", "shop", "--kind", "deny", "--schedule", "0 22 * * *", "--duration", "1h", "--applications", "*"}},
		{args: []string{"proj", "windows", "list", "shop"}, want: `(?m)^0 +(Active|Inactive) +deny +0 22 \* \* \* +1h +\* `},
		{args: []string{"cluster", "list"}, want: `(?m)^https://kubernetes.default.svc +in-cluster +[0-9.]+ +Successful`},
		{args: []string{"cluster", "get", "in-cluster"}, want: `(?m)^server: https://kubernetes.default.svc`},
		{args: []string{"repo", "list"}, want: `TYPE +NAME +REPO`},
		{args: []string{"repo", "add", env.gitURL, "--name", "hello"}, want: `Repository '` + env.gitURL + `' added`},
		{args: []string{"repo", "list"}, want: `(?m)^git +hello +` + env.gitURL + ` +false +false +false +false +Successful`},
		{args: []string{"repo", "add", env.gitURL + "-none"}, exit: 20, want: `Unable to connect to repository`},
		{args: []string{"repo", "rm", env.gitURL}, want: `Repository '` + env.gitURL + `' removed`},
		{args: []string{"repo", "list"}, want: `^TYPE +NAME +REPO[^\n]*\n$`},
		{args: []string{"appset", "list"}, want: `(?m)^argocd/guestbooks +default +nil `},
		{args: []string{"appset", "get", "guestbooks"}, want: `(?s)Name: +argocd/guestbooks\n.*Project: +default`},
		{args: []string{"appset", "get", "nope"}, exit: 20, want: `not found`},
		{args: []string{"app", "create", "shop", "--repo", "https://git.example/shop.git", "--path", "shop", "--project", "shop",
			"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "shop"}, want: `application 'shop' created`},
		{args: []string{"app", "create", "blog", "--repo", "https://git.example/blog.git", "--path", "blog", "--project", "shop",
			"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "shop"}, exit: 20, want: `application repo https://git.example/blog.git is not permitted in project 'shop'`},
		{args: []string{"app", "list"}, want: `(?m)^argocd/shop +https://kubernetes.default.svc +shop +shop `},
		{args: []string{"app", "get", "shop"}, want: `(?s)Name: +argocd/shop.*Project: +shop`},
		{args: []string{"app", "set", "shop", "--revision", "v2"}},
		{args: []string{"app", "patch", "shop", "--patch", `{"spec":{"source":{"path":"shop-v2"}}}`, "--type", "merge"}},
		{args: []string{"app", "get", "shop", "-o", "yaml"}, want: `(?s)path: shop-v2.*targetRevision: v2`},
		{args: []string{"app", "history", "shop"}}, // no deployment yet: nothing, as Argo CD prints
		{args: []string{"app", "terminate-op", "shop"}, exit: 20, want: `Unable to terminate operation. No operation is in progress`},
		{args: []string{"app", "get", "nope"}, exit: 20, want: `not found`},
		{args: []string{"app", "delete", "shop", "--cascade=false", "--yes"}},
		{args: []string{"app", "list"}, want: `^NAME +CLUSTER +NAMESPACE +PROJECT +STATUS +HEALTH +SYNCPOLICY +CONDITIONS +REPO +PATH +TARGET\n$`},
		{args: []string{"proj", "delete", "shop"}},
		{args: []string{"logout", m.addr()}, want: `Logged out from '` + regexp.QuoteMeta(m.addr()) + `'`},
		{args: []string{"account", "get-user-info"}, want: `Logged In: false`},
	}
	for _, s := range steps {
		out, code := argocd(t, m, config, s.args...)
		name := strings.ReplaceAll(strings.Join(s.args, " "), env.adminPassword, "***")
		if code != s.exit {
			t.Errorf("argocd %s: exit %d, want %d\n%s", name, code, s.exit, out)
			continue
		}
		if s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
			t.Errorf("argocd %s: output does not match %q:\n%s", name, s.want, out)
		}
	}
}

// TestCLISync syncs an app with the argocd CLI while wavecd's controller
// runs: sync (which follows the operation through the event stream),
// wait, history, resources, a second commit, rollback to the first
// deployment, and a cascading delete.
func TestCLISync(t *testing.T) {
	m := modes[0]
	config := filepath.Join(t.TempDir(), "config")
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			out, code := argocd(t, m, config, s.args...)
			name := strings.ReplaceAll(strings.Join(s.args, " "), env.adminPassword, "***")
			if code != s.exit || s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
				t.Fatalf("argocd %s: exit %d (want %d), output:\n%s\nwant it to match %q", name, code, s.exit, out, s.want)
			}
		}
	}
	run([]step{
		{args: []string{"login", m.addr(), "--username", "admin", "--password", env.adminPassword}},
		{args: []string{"app", "create", "hello", "--repo", helloRepoURL, "--path", "cm", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "default"}},
		{args: []string{"app", "sync", "hello", "--prune", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*ConfigMap +default +hello +Synced`},
		{args: []string{"app", "wait", "hello", "--sync", "--health", "--timeout", "60"}, want: `(?m)^Sync Status: +Synced`},
		{args: []string{"app", "resources", "hello"}, want: `(?m)^ +ConfigMap +default +hello +No`},
		{args: []string{"app", "history", "hello"}, want: `(?m)^0 +\S+ \S+ \S+ \S+ +\(`},
		{args: []string{"app", "manifests", "hello"}, want: `(?s)kind: ConfigMap.*name: hello`},
		{args: []string{"app", "diff", "hello"}}, // in sync: exit 0
	})
	first, err := gitHead(env.repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitCommit(env.repo, map[string]string{"cm/cm.yaml": helloConfigMap("2")}); err != nil {
		t.Fatal(err)
	}
	run([]step{
		{args: []string{"app", "get", "hello", "--hard-refresh"}, want: `Sync Status: +OutOfSync`},
		{args: []string{"app", "diff", "hello"}, exit: 1, want: `(?s)/ConfigMap default/hello.*a: "2"`},
		{args: []string{"app", "diff", "hello", "--diff-exit-code", "2"}, exit: 2},
		{args: []string{"app", "diff", "nope"}, exit: 20, want: `not found`},
		{args: []string{"app", "sync", "hello", "--dry-run", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*ConfigMap +default +hello +OutOfSync`},
		{args: []string{"app", "diff", "hello"}, exit: 1}, // a dry run changes nothing
		{args: []string{"app", "sync", "hello", "--resource", ":ConfigMap:default/hello", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*ConfigMap +default +hello +Synced`},
		{args: []string{"app", "sync", "hello", "--resource", ":Secret:default/none", "--timeout", "120"}, exit: 1, want: `No matching app resources found`}, // the CLI's own check
		{args: []string{"app", "history", "hello", "-o", "id"}, want: `^0\n1\n$`},                                                                            // the dry run is not in the history
		{args: []string{"app", "sync", "hello", "--revision", first, "--timeout", "120"}, want: `Sync Revision: +` + first + `\nPhase: +Succeeded`},
		{args: []string{"app", "wait", "hello", "--operation", "--timeout", "60"}, want: `(?m)^Health Status: +Healthy`},
		{args: []string{"app", "manifests", "hello", "--source", "live"}, want: `a: "1"`},
		{args: []string{"app", "history", "hello", "-o", "id"}, want: `^0\n1\n2\n$`},
		{args: []string{"app", "rollback", "hello", "1", "--timeout", "120"}, want: `Phase: +Succeeded`},
		{args: []string{"app", "manifests", "hello", "--source", "live"}, want: `a: "2"`},
		{args: []string{"app", "delete", "hello", "--yes", "--wait"}},
		{args: []string{"app", "get", "hello"}, exit: 20, want: `not found`},
	})
}

// gitHead is the commit the work tree dir has checked out.
func gitHead(dir string) (string, error) {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(out)), err
}
