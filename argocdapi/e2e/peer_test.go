package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// peerNamespace is the control namespace of the reference Argo CD.
const peerNamespace = "argocd-peer"

// startArgoCD starts a real Argo CD v3.6.1 on the cluster, in namespace
// argocd-peer: redis (Debian's redis-server), the repo server, the
// application controller and argocd-server (TLS), all from the argocd
// binary the tests run as the CLI (one binary, its part picked by
// ARGOCD_BINARY_NAME), on 127.0.0.1. The CLI's steps run against it too:
// an expectation holds for wavecd only if it holds for Argo CD.
func startArgoCD(st *stopper, dir string) error {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return fmt.Errorf("the reference Argo CD needs redis-server (apt-get install -y redis-server; .ci/run does it): %w", err)
	}
	ctx := context.Background()
	labels := map[string]string{"app.kubernetes.io/part-of": "argocd"}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: peerNamespace, Labels: labels}}
	if _, err := env.kube.CoreV1().ConfigMaps(peerNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the peer's argocd-cm: %w", err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: peerNamespace, Labels: labels}}
	if _, err := env.kube.CoreV1().Secrets(peerNamespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the peer's argocd-secret: %w", err)
	}
	work := filepath.Join(dir, "argocd-peer")
	argoEnv, err := argoCDEnv(work)
	if err != nil {
		return err
	}
	start := func(name string, wait func() bool, args ...string) error {
		bin, a := env.argocd, args
		if name == "redis-server" {
			bin = name
		}
		stop, err := startProcessEnv(filepath.Join(work, name+".log"), append(argoEnv, "ARGOCD_BINARY_NAME="+name), bin, a...)
		if err != nil {
			return err
		}
		st.add(stop)
		if err := waitFor(2*time.Minute, name, wait); err != nil {
			return fmt.Errorf("%w\n%s", err, tail(filepath.Join(work, name+".log")))
		}
		return nil
	}
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	redis, repo, repoMetrics, metrics, server, serverMetrics := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	redisAddr, repoAddr := fmt.Sprintf("127.0.0.1:%d", redis), fmt.Sprintf("127.0.0.1:%d", repo)
	env.peerAddr = fmt.Sprintf("127.0.0.1:%d", server)
	steps := []struct {
		name string
		wait func() bool
		args []string
	}{
		{"redis-server", listening(redisAddr), []string{"--bind", "127.0.0.1", "--port", fmt.Sprint(redis), "--save", "", "--appendonly", "no", "--dir", work}},
		{"argocd-repo-server", listening(repoAddr), []string{"--port", fmt.Sprint(repo), "--address", "127.0.0.1", "--redis", redisAddr,
			"--metrics-address", "127.0.0.1", "--metrics-port", fmt.Sprint(repoMetrics), "--disable-tls", "--client-ca-path=", "--otlp-address", ""}},
		{"argocd-application-controller", listening(fmt.Sprintf("127.0.0.1:%d", metrics)), []string{"--namespace", peerNamespace,
			"--redis", redisAddr, "--repo-server", repoAddr, "--repo-server-plaintext", "--metrics-port", fmt.Sprint(metrics), "--otlp-address", ""}},
		{"argocd-server", func() bool { return get("https://"+env.peerAddr+"/healthz") == nil }, []string{"--namespace", peerNamespace,
			"--address", "127.0.0.1", "--port", fmt.Sprint(server), "--metrics-port", fmt.Sprint(serverMetrics), "--redis", redisAddr,
			"--repo-server", repoAddr, "--repo-server-plaintext", "--otlp-address", "", "--staticassets", work}},
	}
	for _, s := range steps {
		if err := start(s.name, s.wait, s.args...); err != nil {
			return err
		}
	}
	return waitFor(time.Minute, "the peer's initial admin password", func() bool {
		sec, err := env.kube.CoreV1().Secrets(peerNamespace).Get(ctx, "argocd-initial-admin-secret", metav1.GetOptions{})
		if err == nil {
			env.peerPassword = string(sec.Data["password"])
		}
		return env.peerPassword != ""
	})
}

// argoCDEnv is the environment Argo CD's processes run with outside a
// pod: the cluster from the kubeconfig, data folders of their own, and
// the git wrapper scripts its image carries on the PATH.
func argoCDEnv(work string) ([]string, error) {
	mod, err := argoCDModuleDir()
	if err != nil {
		return nil, err
	}
	tools := filepath.Join(work, "tools")
	for _, d := range []string{tools, filepath.Join(work, "tls"), filepath.Join(work, "ssh"), filepath.Join(work, "gnupg")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{"git-ask-pass.sh", "git-verify-wrapper.sh", "gpg-wrapper.sh"} {
		b, err := os.ReadFile(filepath.Join(mod, "hack", f))
		if err == nil {
			err = os.WriteFile(filepath.Join(tools, f), b, 0o700) //nolint:gosec // Argo CD's own scripts, run as its image runs them
		}
		if err != nil {
			return nil, err
		}
	}
	return append(os.Environ(), "ARGOCD_FAKE_IN_CLUSTER=true", "KUBECONFIG="+env.kubeconfig, "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_TLS_DATA_PATH="+filepath.Join(work, "tls"), "ARGOCD_SSH_DATA_PATH="+filepath.Join(work, "ssh"),
		"ARGOCD_GNUPGHOME="+filepath.Join(work, "gnupg"), "HOME="+work, "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH")), nil
}

// freePorts finds n distinct free ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listening says whether something accepts connections at addr.
func listening(addr string) func() bool {
	return func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
}
