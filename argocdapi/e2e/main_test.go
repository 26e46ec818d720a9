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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// env is what the tests share: the gateway's address, the admin
// password and the binaries.
var env struct {
	// tlsAddr is a server with TLS, plainAddr one without, each serving
	// Argo CD's API through the gateway on its own port.
	tlsAddr, plainAddr, adminPassword, argocd, kubeconfig, wavecd, gateway string
	// repo is the work tree of the Git repository helloRepoURL names.
	repo string
}

// helloRepoURL is the repository of the apps that sync; the controller
// and the server read it from env.repo.
const helloRepoURL = "https://git.example/hello.git"

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

// setup starts the cluster, wavecd's API server and the gateway; stop
// ends them by their process ids.
func setup() (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var err error
	lc, err := binary("WAVECD_LOCALCLUSTER", "wavecd-localcluster")
	if err != nil {
		return stop, err
	}
	if env.wavecd, err = binary("WAVECD_BIN", "wavecd"); err != nil {
		return stop, err
	}
	if env.argocd, err = binary("ARGOCD_CLI", "argocd"); err != nil {
		return stop, err
	}
	dir, err := os.MkdirTemp("", "argocdapi-e2e-")
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { _ = os.RemoveAll(dir) })
	cluster, err := startProcess(filepath.Join(dir, "cluster.log"), lc, "start", "--dir", filepath.Join(dir, "cluster"), "--nodes", "1")
	if err != nil {
		return stop, err
	}
	stops = append(stops, cluster)
	env.kubeconfig = filepath.Join(dir, "cluster", "kubeconfig")
	if err := waitFor(3*time.Minute, "the local cluster", func() bool { return clusterReady(filepath.Join(dir, "cluster")) }); err != nil {
		return stop, err
	}
	if out, err := exec.Command(env.wavecd, "install", "crds", "--kubeconfig", env.kubeconfig).CombinedOutput(); err != nil {
		return stop, fmt.Errorf("install CRDs: %v\n%s", err, out)
	}
	if out, err := exec.Command("kubectl", "--kubeconfig", env.kubeconfig, "create", "namespace", "argocd").CombinedOutput(); err != nil {
		return stop, fmt.Errorf("create namespace argocd: %v\n%s", err, out)
	}
	// A Git repository the apps sync from, and a controller that syncs
	// them (the repository's URL is mirrored to the folder).
	env.repo = filepath.Join(dir, "repo")
	if err := gitCommit(env.repo, map[string]string{"cm/cm.yaml": helloConfigMap("1")}, "init", "-q", "-b", "main"); err != nil {
		return stop, err
	}
	ctrl, err := startProcess(filepath.Join(dir, "controller.log"), env.wavecd, "controller", "--kubeconfig", env.kubeconfig,
		"-n", "argocd", "--cache-dir", filepath.Join(dir, "ctrl-cache"), "--mirror", helloRepoURL+"="+env.repo)
	if err != nil {
		return stop, err
	}
	stops = append(stops, ctrl)
	// The gateway is built from this module's code, so the tests test it.
	env.gateway = filepath.Join(dir, "wavecd-argocd-api")
	if out, err := exec.Command("go", "build", "-o", env.gateway, "../cmd/wavecd-argocd-api").CombinedOutput(); err != nil {
		return stop, fmt.Errorf("build the gateway: %v\n%s", err, out)
	}
	for i, insecure := range []bool{false, true} {
		addr, err := freeAddr()
		if err != nil {
			return stop, err
		}
		args := []string{"server", "--listen", addr, "--kubeconfig", env.kubeconfig, "-n", "argocd",
			"--cache-dir", filepath.Join(dir, "cache"), "--argocd-api", env.gateway, "--mirror", helloRepoURL + "=" + filepath.Join(dir, "repo")}
		scheme := "https"
		if insecure {
			args, scheme = append(args, "--insecure"), "http"
		}
		logPath := filepath.Join(dir, fmt.Sprintf("server-%d.log", i))
		server, err := startProcess(logPath, env.wavecd, args...)
		if err != nil {
			return stop, err
		}
		stops = append(stops, server)
		if err := waitFor(time.Minute, "wavecd's API server", func() bool { return get(scheme+"://"+addr+"/healthz") == nil }); err != nil {
			return stop, fmt.Errorf("%w\n%s", err, tail(logPath))
		}
		if insecure {
			env.plainAddr = addr
		} else {
			env.tlsAddr = addr
		}
	}
	out, err := exec.Command(env.wavecd, "admin", "initial-password", "--kubeconfig", env.kubeconfig, "-n", "argocd").Output()
	if err != nil {
		return stop, fmt.Errorf("read the admin password: %v", err)
	}
	env.adminPassword = strings.TrimSpace(string(out))
	return stop, nil
}

// startProcess runs a command in its own process group, logging to a
// file; the function returned stops the group by its id.
func startProcess(logPath, name string, args ...string) (func(), error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
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
