package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// target is a server the CLI talks to, and how it reaches it: wavecd in
// each of its transports, and the reference Argo CD.
type target struct {
	name  string
	addr  func() string
	flags []string
	// password is the admin's; namespace is the control namespace.
	password  func() string
	namespace string
	// engine is wavecd or argocd; controllerLog is the file its
	// controller logs to, under env.logs.
	engine, controllerLog string
}

var (
	wavecdTLS = wavecdVia("grpc over TLS", func() string { return env.tlsAddr }, "--insecure")
	argoCD    = target{name: "Argo CD v3.6.1, grpc over TLS", addr: func() string { return env.peerAddr }, flags: []string{"--insecure"},
		password: func() string { return env.peerPassword }, namespace: peerNamespace, engine: "argocd",
		controllerLog: "argocd-peer/argocd-application-controller.log"}
	targets = []target{
		wavecdTLS,
		wavecdVia("grpc-web over TLS", func() string { return env.tlsAddr }, "--insecure", "--grpc-web"),
		wavecdVia("grpc over plain HTTP/2", func() string { return env.plainAddr }, "--plaintext"),
		argoCD,
	}
)

// wavecdVia is wavecd reached in one way.
func wavecdVia(how string, addr func() string, flags ...string) target {
	return target{name: "wavecd, " + how, addr: addr, flags: flags, password: func() string { return env.adminPassword },
		namespace: "argocd", engine: "wavecd", controllerLog: "controller.log"}
}

// argocd runs the argocd CLI with its own config file against tg; it
// returns the output and the exit code.
func argocd(t *testing.T, tg target, config string, args ...string) (string, int) {
	t.Helper()
	full := append(append([]string{"--config", config, "--server", tg.addr()}, tg.flags...), args...)
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
// each transport and against Argo CD, and checks each exit code and the
// shape of each output: each expectation must hold for both.
func TestCLI(t *testing.T) {
	shop, dir, err := newRepo("shop", map[string]string{"shop/cm.yaml": helloConfigMap("shop")})
	if err == nil {
		err = gitCommit(dir, map[string]string{"shop-v2/cm.yaml": helloConfigMap("shop-v2")})
	}
	if err == nil {
		err = exec.Command("git", "-C", dir, "tag", "v2").Run()
	}
	if err != nil {
		t.Fatal(err)
	}
	blog, _, err := newRepo("blog", map[string]string{"blog/cm.yaml": helloConfigMap("blog")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if err := createAppSet(tg.namespace); err != nil {
			t.Fatal(err)
		}
		t.Run(tg.name, func(t *testing.T) { runSteps(t, tg, cliSteps(tg, shop, blog)) })
	}
}

// cliSteps are TestCLI's steps against tg; shop is the repository of its
// apps, blog one its project does not allow.
func cliSteps(tg target, shop, blog string) []step {
	pw, addr, ns := tg.password(), regexp.QuoteMeta(tg.addr()), tg.namespace
	return []step{
		{args: []string{"login", tg.addr(), "--username", "admin", "--password", pw}, want: `'admin:login' logged in successfully`},
		{args: []string{"login", tg.addr(), "--username", "admin", "--password", "wrong"}, exit: 20, want: `Invalid username or password`},
		{args: []string{"version"}, want: `(?s)argocd: v.*argocd-server: `},
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: admin\nIssuer: argocd`},
		{args: []string{"account", "list"}, want: `NAME +ENABLED +CAPABILITIES\nadmin +true +login`},
		{args: []string{"account", "update-password", "--current-password", pw, "--new-password", pw + "-2"},
			want: `Password updated\nContext '` + addr + `' updated`}, // and the CLI signed in again
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: admin`},
		{args: []string{"account", "update-password", "--current-password", "wrong-password", "--new-password", pw},
			exit: 20, want: `current password does not match`},
		{args: []string{"account", "update-password", "--current-password", pw + "-2", "--new-password", pw}, want: `Password updated`},
		{args: []string{"proj", "get", "default"}, want: `Destinations: +\*,\*`}, // the server made it
		{args: []string{"proj", "create", "shop", "--src", shop, "--dest", "https://kubernetes.default.svc,shop"}},
		{args: []string{"proj", "list"}, want: `(?m)^shop +https://kubernetes.default.svc,shop +` + shop},
		{args: []string{"proj", "get", "shop"}, want: `Name: +shop\n`},
		{args: []string{"proj", "windows", "list", "shop"}, want: `ID +STATUS +KIND +SCHEDULE`},
		{args: []string{"proj", "windows", "add", "shop", "--kind", "deny", "--schedule", "0 22 * * *", "--duration", "1h", "--applications", "*"}},
		{args: []string{"proj", "windows", "list", "shop"}, want: `(?m)^0 +(Active|Inactive) +deny +0 22 \* \* \* +1h +\* `},
		{args: []string{"cluster", "list"}, want: `(?m)^https://kubernetes.default.svc +in-cluster +1\.\d+\.\d+ +Unknown +Cluster has no applications and is not being monitored\.`},
		{args: []string{"cluster", "get", "in-cluster"}, want: `(?m)^server: https://kubernetes.default.svc`},
		{args: []string{"repo", "list"}, want: `TYPE +NAME +REPO`},
		{args: []string{"repo", "add", shop, "--name", "shop"}, want: `Repository '` + shop + `' added`},
		{args: []string{"repo", "list"}, want: `(?m)^git +shop +` + shop + ` +false +false +false +false +Successful`},
		{args: []string{"repo", "add", shop + "-none"}, exit: 20, want: `error testing repository connectivity: `},
		{args: []string{"repo", "rm", shop}, want: `Repository '` + shop + `' removed`},
		{args: []string{"repo", "list"}, want: `^TYPE +NAME +REPO[^\n]*\n$`},
		{args: []string{"appset", "list"}, want: `(?m)^` + ns + `/guestbooks +default +nil `},
		{args: []string{"appset", "get", "guestbooks"}, want: `(?s)Name: +` + ns + `/guestbooks\n.*Project: +default`},
		{args: []string{"appset", "get", "nope"}, exit: 20, want: `not found`},
		{args: []string{"app", "create", "shop", "--repo", shop, "--path", "shop", "--project", "shop",
			"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "shop"}, want: `application 'shop' created`},
		{args: []string{"app", "create", "blog", "--repo", blog, "--path", "blog", "--project", "shop",
			"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "shop"}, exit: 20, want: `application repo ` + blog + ` is not permitted in project 'shop'`},
		{args: []string{"app", "list"}, want: `(?m)^` + ns + `/shop +https://kubernetes.default.svc +shop +shop `},
		{args: []string{"app", "get", "shop"}, want: `(?s)Name: +` + ns + `/shop.*Project: +shop`},
		{args: []string{"app", "set", "shop", "--revision", "v2"}},
		{args: []string{"app", "patch", "shop", "--patch", `{"spec":{"source":{"path":"shop-v2"}}}`, "--type", "merge"}},
		{args: []string{"app", "get", "shop", "-o", "yaml"}, want: `(?s)path: shop-v2.*targetRevision: v2`},
		{args: []string{"app", "history", "shop"}}, // no deployment yet: nothing
		{args: []string{"app", "terminate-op", "shop"}, exit: 20, want: `Unable to terminate operation. No operation is in progress`},
		{args: []string{"app", "get", "nope"}, exit: 20, want: `PermissionDenied desc = permission denied`}, // missing, or not yours: one answer
		{args: []string{"app", "delete", "shop", "--cascade=false", "--yes"}},
		{args: []string{"app", "list"}, want: `^NAME +CLUSTER +NAMESPACE +PROJECT +STATUS +HEALTH +SYNCPOLICY +CONDITIONS +REPO +PATH +TARGET\n$`},
		{args: []string{"proj", "delete", "shop"}},
		{args: []string{"logout", tg.addr()}, want: `Logged out from '` + addr + `'`},
		{args: []string{"account", "get-user-info"}, want: `Logged In: false`},
	}
}

// runSteps runs steps in order against tg with a config file of their
// own; each failure is reported and the steps go on.
func runSteps(t *testing.T, tg target, steps []step) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config")
	for _, s := range steps {
		out, code := argocd(t, tg, config, s.args...)
		name := strings.ReplaceAll(strings.Join(s.args, " "), tg.password(), "***")
		if code != s.exit {
			t.Errorf("argocd %s: exit %d, want %d\n%s", name, code, s.exit, out)
			continue
		}
		if s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
			t.Errorf("argocd %s: output does not match %q:\n%s", name, s.want, out)
		}
	}
}

// TestCLISync syncs an app with the argocd CLI, against wavecd with its
// controller running and against Argo CD: sync (which follows the
// operation through the event stream), wait, history, resources, diff, a
// second commit, dry runs, partial and older-revision syncs, rollback,
// and a cascading delete.
func TestCLISync(t *testing.T) {
	for _, tg := range []target{wavecdTLS, argoCD} {
		t.Run(tg.name, func(t *testing.T) { syncSteps(t, tg) })
	}
}

func syncSteps(t *testing.T, tg target) {
	name := "hello-" + tg.engine
	repo, dir, err := newRepo(name, map[string]string{"cm/cm.yaml": helloConfigMap("1")})
	if err == nil {
		err = createNamespace(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config")
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			mustStep(t, tg, config, s)
		}
	}
	cm := `ConfigMap +` + name + ` +hello +`
	run([]step{
		{args: []string{"login", tg.addr(), "--username", "admin", "--password", tg.password()}},
		{args: []string{"app", "create", "hello", "--repo", repo, "--path", "cm", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", name}},
		{args: []string{"app", "sync", "hello", "--prune", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*` + cm + `\w+ +\w* +configmap/hello created`},
		{args: []string{"app", "wait", "hello", "--sync", "--health", "--timeout", "60"}, want: `(?m)^Sync Status: +Synced`},
		{args: []string{"app", "resources", "hello"}, want: `(?m)^ +` + cm + `No`},
		{args: []string{"app", "history", "hello"}, want: `(?m)^0 +\S+ \S+ \S+ \S+ +\(`},
		{args: []string{"app", "manifests", "hello"}, want: `(?s)kind: ConfigMap.*name: hello`},
		{args: []string{"app", "diff", "hello"}}, // in sync: exit 0
	})
	first, err := gitHead(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitCommit(dir, map[string]string{"cm/cm.yaml": helloConfigMap("2")}); err != nil {
		t.Fatal(err)
	}
	run([]step{
		{args: []string{"app", "get", "hello", "--hard-refresh"}, want: `Sync Status: +OutOfSync`},
		{args: []string{"app", "diff", "hello"}, exit: 1, want: `(?s)/ConfigMap ` + name + `/hello.*a: "2"`},
		{args: []string{"app", "diff", "hello", "--diff-exit-code", "2"}, exit: 2},
		{args: []string{"app", "diff", "nope"}, exit: 20, want: `permission denied`},
		{args: []string{"app", "sync", "hello", "--dry-run", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*` + cm + `OutOfSync +\w* +configmap/hello configured \(dry run\)`},
		{args: []string{"app", "diff", "hello"}, exit: 1}, // a dry run changes nothing
		{args: []string{"app", "sync", "hello", "--resource", ":ConfigMap:" + name + "/hello", "--timeout", "120"}, want: `(?s)Phase: +Succeeded.*` + cm + `\w+ +\w* +configmap/hello configured`},
		{args: []string{"app", "sync", "hello", "--resource", ":Secret:" + name + "/none", "--timeout", "120"}, exit: 1, want: `No matching app resources found`}, // the CLI's own check
		{args: []string{"app", "history", "hello", "-o", "id"}, want: `^0\n$`},                                                                                    // neither the dry run nor the partial sync is in the history
		{args: []string{"app", "sync", "hello", "--revision", first, "--timeout", "120"}, want: `Sync Revision: +` + first + `\nPhase: +Succeeded`},
		{args: []string{"app", "wait", "hello", "--operation", "--timeout", "60"}, want: `(?m)^Health Status: +Healthy`},
		{args: []string{"app", "manifests", "hello", "--source", "live"}, want: `a: "1"`},
		{args: []string{"app", "sync", "hello", "--timeout", "120"}, want: `Phase: +Succeeded`},
		{args: []string{"app", "history", "hello", "-o", "id"}, want: `^0\n1\n2\n$`},
		{args: []string{"app", "rollback", "hello", "1", "--timeout", "120"}, want: `Phase: +Succeeded`},
		{args: []string{"app", "manifests", "hello", "--source", "live"}, want: `a: "1"`},
		{args: []string{"app", "delete", "hello", "--yes", "--wait"}},
		{args: []string{"app", "get", "hello"}, exit: 20, want: `permission denied`},
	})
}

// gitHead is the commit the work tree dir has checked out.
func gitHead(dir string) (string, error) {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(out)), err
}

// TestCLITerminate terminates a running sync with argocd app terminate-op,
// against wavecd and Argo CD: the sync waits in wave 0 on a
// PersistentVolumeClaim that stays Pending (no provisioner), so wave 1
// never comes.
func TestCLITerminate(t *testing.T) {
	for _, tg := range []target{wavecdTLS, argoCD} {
		t.Run(tg.name, func(t *testing.T) { terminateSteps(t, tg) })
	}
}

func terminateSteps(t *testing.T, tg target) {
	name := "slow-" + tg.engine
	repo, _, err := newRepo(name, map[string]string{
		"app/pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n" +
			"spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\n",
	})
	if err == nil {
		err = createNamespace(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config")
	run := func(s step) string {
		t.Helper()
		return mustStep(t, tg, config, s)
	}
	run(step{args: []string{"login", tg.addr(), "--username", "admin", "--password", tg.password()}})
	run(step{args: []string{"app", "create", "slow", "--repo", repo, "--path", "app", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", name}})
	run(step{args: []string{"app", "sync", "slow", "--async"}})
	var out string
	err = waitFor(time.Minute, "the sync to run", func() bool {
		out, _ = argocd(t, tg, config, "app", "get", "slow", "--show-operation")
		return regexp.MustCompile(`(?m)^Phase: +Running`).MatchString(out)
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	run(step{args: []string{"app", "terminate-op", "slow"}, want: `^Application 'slow' operation terminating\n$`})
	err = waitFor(time.Minute, "the sync to end", func() bool {
		out, _ = argocd(t, tg, config, "app", "get", "slow", "--show-operation")
		return regexp.MustCompile(`(?m)^Phase: +Failed\n(?s).*Message: +Operation terminated`).MatchString(out)
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	run(step{args: []string{"app", "terminate-op", "slow"}, exit: 20, want: `Unable to terminate operation. No operation is in progress`})
	run(step{args: []string{"app", "resources", "slow"}, want: `(?m)^ +ConfigMap +` + name + ` +later +No`}) // wave 1 was never applied
	run(step{args: []string{"app", "delete", "slow", "--yes", "--wait"}})
	if tg.engine == "wavecd" {
		// wavecd runs on Argo CD's CRDs here: it says so once, and writes
		// nothing the API server would drop (a warning on every write).
		log, err := os.ReadFile(filepath.Join(env.logs, tg.controllerLog))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), "the Application CRD is Argo CD's") || strings.Contains(string(log), "unknown field") {
			t.Errorf("the controller's log should warn of Argo CD's CRD once and have no unknown field:\n%s", tail(filepath.Join(env.logs, tg.controllerLog)))
		}
	}
}

// mustStep runs one step against tg and ends the test, with the tail of
// tg's controller log, when its exit code or output is not as expected.
func mustStep(t *testing.T, tg target, config string, s step) string {
	t.Helper()
	out, code := argocd(t, tg, config, s.args...)
	if code != s.exit || s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
		t.Fatalf("argocd %s: exit %d (want %d), output:\n%s\nwant it to match %q\nthe controller's log ends:\n%s",
			strings.ReplaceAll(strings.Join(s.args, " "), tg.password(), "***"), code, s.exit, out, s.want,
			tail(filepath.Join(env.logs, tg.controllerLog)))
	}
	return out
}
