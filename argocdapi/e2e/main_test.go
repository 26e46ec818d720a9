// Package e2e runs the real argocd CLI (Argo CD v3.6.1, built from the Go
// module proxy: make argocd-cli) against wavecd: a local cluster and
// wavecd's API server (bin/wavecd) with the gateway built from this
// module behind its port, all on 127.0.0.1.
package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// env is what the tests share: the gateway's address, the admin
// password and the binaries.
var env struct {
	// tlsAddr is a server with TLS, plainAddr one without, each serving
	// Argo CD's API through the gateway on its own port.
	tlsAddr, plainAddr, adminPassword, argocd, kubeconfig, wavecd, gateway string
	// gitRoot holds the Git repositories the apps come from, each a work
	// tree; gitBase serves them over HTTP (gitBase/NAME), with git
	// http-backend.
	gitRoot, gitBase string
	// peer is a real Argo CD (argocd-server, repo server, application
	// controller and redis) on the same cluster, in namespace
	// argocd-peer: the reference the CLI's outputs are compared with.
	peerAddr, peerPassword string
	// logs is the folder of the servers' and controllers' logs.
	logs string
	// kube and dynamic are clients of the cluster.
	kube    kubernetes.Interface
	dynamic dynamic.Interface
}

func helloConfigMap(value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: \"" + value + "\"}\n"
}

// gitCommit writes files into the work tree dir and commits them; with
// init args it creates the repository first (git init ARGS).
func gitCommit(dir string, files map[string]string, init ...string) error {
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.test",
			"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.test", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if len(init) > 0 {
		if err := git(init...); err != nil {
			return err
		}
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "-m", "change")
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	stop, err := setup()
	defer stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		return 1
	}
	return m.Run()
}

// binary finds a binary of the repository's bin/, or the path an
// environment variable names.
func binary(envVar, name string) (string, error) {
	p := os.Getenv(envVar)
	if p == "" {
		p, _ = filepath.Abs(filepath.Join("..", "..", "bin", name))
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found (%s; make %s builds it): %w", name, envVar, name, err)
	}
	return p, nil
}

// setup starts the cluster, a controller and two API servers with the
// gateway; stop ends them by their process ids.
func setup() (func(), error) {
	st := &stopper{}
	lc, err := binary("WAVECD_LOCALCLUSTER", "wavecd-localcluster")
	if err == nil {
		env.wavecd, err = binary("WAVECD_BIN", "wavecd")
	}
	if err == nil {
		env.argocd, err = binary("ARGOCD_CLI", "argocd")
	}
	if err != nil {
		return st.stop, err
	}
	dir, err := os.MkdirTemp("", "argocdapi-e2e-")
	if err != nil {
		return st.stop, err
	}
	st.add(func() { _ = os.RemoveAll(dir) })
	env.logs = dir
	for _, step := range []func(*stopper, string) error{
		func(st *stopper, dir string) error { return startCluster(st, dir, lc) },
		serveGit, startController, startServers, startArgoCD,
	} {
		if err := step(st, dir); err != nil {
			return st.stop, err
		}
	}
	out, err := exec.Command(env.wavecd, "admin", "initial-password", "--kubeconfig", env.kubeconfig, "-n", "argocd").Output()
	if err != nil {
		return st.stop, fmt.Errorf("read the admin password: %v", err)
	}
	env.adminPassword = strings.TrimSpace(string(out))
	return st.stop, nil
}

// stopper stops what setup started, last first.
type stopper struct{ stops []func() }

func (s *stopper) add(f func()) { s.stops = append(s.stops, f) }

func (s *stopper) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// startCluster starts a local cluster of one node, with wavecd's CRDs and
// namespace argocd.
func startCluster(st *stopper, dir, lc string) error {
	cluster, err := startProcess(filepath.Join(dir, "cluster.log"), lc, "start", "--dir", filepath.Join(dir, "cluster"), "--nodes", "1")
	if err != nil {
		return err
	}
	st.add(cluster)
	env.kubeconfig = filepath.Join(dir, "cluster", "kubeconfig")
	if err := waitFor(3*time.Minute, "the local cluster", func() bool { return clusterReady(filepath.Join(dir, "cluster")) }); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(filepath.Join(dir, "cluster.log")))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		return err
	}
	if env.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if env.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	// Argo CD's CRDs first, as a cluster moving from Argo CD has them:
	// wavecd keeps them and works with them.
	if err := installArgoCDCRDs(); err != nil {
		return err
	}
	if out, err := exec.Command(env.wavecd, "install", "crds", "--kubeconfig", env.kubeconfig).CombinedOutput(); err != nil {
		return fmt.Errorf("install CRDs: %v\n%s", err, out)
	}
	for _, name := range []string{"argocd", peerNamespace} {
		if err := createNamespace(name); err != nil {
			return err
		}
	}
	return nil
}

// installArgoCDCRDs creates Argo CD's CRDs (its module's
// manifests/crds) and waits until the API server serves them.
func installArgoCDCRDs() error {
	dir, err := argoCDModuleDir()
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, f := range []string{"application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, "manifests", "crds", f))
		if err != nil {
			return err
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &crd.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := env.dynamic.Resource(gvr).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Argo CD's CRD %s: %w", crd.GetName(), err)
		}
		err = waitFor(time.Minute, "CRD "+crd.GetName(), func() bool {
			live, err := env.dynamic.Resource(gvr).Get(context.Background(), crd.GetName(), metav1.GetOptions{})
			conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
			for _, c := range conds {
				if c, ok := c.(map[string]any); ok && err == nil && c["type"] == "Established" && c["status"] == "True" {
					return true
				}
			}
			return false
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// argoCDModuleDir is where Argo CD's module (the version this module
// requires) lies in the module cache.
func argoCDModuleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		return "", fmt.Errorf("find Argo CD's module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// newRepo creates Git repository name under env.gitRoot with the files;
// it returns its URL and its work tree.
func newRepo(name string, files map[string]string) (string, string, error) {
	dir := filepath.Join(env.gitRoot, name)
	if err := gitCommit(dir, files, "init", "-q", "-b", "main"); err != nil {
		return "", "", err
	}
	return env.gitBase + "/" + name, dir, nil
}

// startController starts wavecd's controller.
func startController(st *stopper, dir string) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "controller.log")
	ctrl, err := startProcess(logPath, env.wavecd, "controller", "--kubeconfig", env.kubeconfig,
		"-n", "argocd", "--cache-dir", filepath.Join(dir, "ctrl-cache"), "--listen", addr)
	if err != nil {
		return err
	}
	st.add(ctrl)
	if err := waitFor(time.Minute, "wavecd's controller", listening(addr)); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(logPath))
	}
	return nil
}

// startServers builds the gateway from this module's code (so the tests
// test it) and starts two API servers with it: one with TLS, one
// without.
func startServers(st *stopper, dir string) error {
	env.gateway = filepath.Join(dir, "wavecd-argocd-api")
	if out, err := exec.Command("go", "build", "-o", env.gateway, "../cmd/wavecd-argocd-api").CombinedOutput(); err != nil {
		return fmt.Errorf("build the gateway: %v\n%s", err, out)
	}
	for i, insecure := range []bool{false, true} {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		args := []string{"server", "--listen", addr, "--kubeconfig", env.kubeconfig, "-n", "argocd",
			"--cache-dir", filepath.Join(dir, "cache"), "--argocd-api", env.gateway}
		scheme := "https"
		if insecure {
			args, scheme = append(args, "--insecure"), "http"
		}
		logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", i))
		server, err := startProcess(logPath, env.wavecd, args...)
		if err != nil {
			return err
		}
		st.add(server)
		if err := waitFor(time.Minute, "wavecd's API server", func() bool { return get(scheme+"://"+addr+"/healthz") == nil }); err != nil {
			return fmt.Errorf("%w\n%s", err, tail(logPath))
		}
		if insecure {
			env.plainAddr = addr
		} else {
			env.tlsAddr = addr
		}
	}
	return nil
}

// serveGit serves the Git repositories of the apps over HTTP on
// loopback, with git's own http-backend behind a CGI handler.
func serveGit(st *stopper, dir string) error {
	env.gitRoot = filepath.Join(dir, "git")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return err
	}
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + env.gitRoot, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := &http.Server{Handler: backend, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	st.add(func() { _ = srv.Close() })
	env.gitBase = "http://" + ln.Addr().String()
	return nil
}

// startProcess runs a command in its own process group, logging to a
// file; the function returned stops the group by its id.
func startProcess(logPath, name string, args ...string) (func(), error) {
	return startProcessEnv(logPath, nil, name, args...)
}

// startProcessEnv is startProcess with an environment (nil: this
// process's).
func startProcessEnv(logPath string, environ []string, name string, args ...string) (func(), error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Env = environ
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(45 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}, nil
}

// createNamespace creates a namespace.
func createNamespace(name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := env.kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// createAppSet creates ApplicationSet guestbooks in a namespace, whose list generator
// has no elements, so the controller makes no apps of it; it is there to
// be read.
func createAppSet(namespace string) error {
	set := &unstructured.Unstructured{}
	err := yaml.Unmarshal([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbooks}
spec:
  generators: [{list: {elements: []}}]
  template:
    metadata: {name: '{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example/guestbook.git, path: '{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{name}}'}
`), &set.Object)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}
	_, err = env.dynamic.Resource(gvr).Namespace(namespace).Create(context.Background(), set, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ApplicationSet guestbooks: %w", err)
	}
	return nil
}

func clusterReady(dir string) bool {
	var st struct {
		Ready bool `json:"ready"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	return err == nil && json.Unmarshal(b, &st) == nil && st.Ready
}

func waitFor(timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s", what, timeout)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func get(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test server's self-signed certificate
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}
