package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/testenv"
)

// controllerProc is a `wavecd controller` process for one namespace, which
// the harness kills with SIGKILL by its PID and starts again.
type controllerProc struct {
	bin, kubeconfig, ns, cacheDir, logPath string
	// args replace the default --leader-elect=false (a sharded replica's
	// flags).
	args []string
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs the controller; it does not wait for it to be ready.
func (c *controllerProc) start() error {
	if c.addr == "" {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		c.addr = addr
	}
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "=== start %s\n", time.Now().Format(time.RFC3339Nano))
	args := []string{"controller", "--kubeconfig", c.kubeconfig, "-n", c.ns, "--listen", c.addr, "--cache-dir", c.cacheDir, "-v"}
	if len(c.args) == 0 {
		args = append(args, "--leader-elect=false")
	}
	cmd := exec.Command(c.bin, append(args, c.args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start controller: %w", err)
	}
	c.cmd, c.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(c.done) }()
	return nil
}

// waitReady waits until the controller's caches are synced.
func (c *controllerProc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + c.addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("controller exited before it was ready; see %s", c.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("controller not ready within %s; see %s", timeout, c.logPath)
}

// kill sends SIGKILL to the controller's PID and waits for it to be gone.
func (c *controllerProc) kill() {
	if c.cmd == nil {
		return
	}
	_ = syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	c.cmd = nil
}

// stop ends the controller gracefully (SIGTERM, then SIGKILL after 20s).
func (c *controllerProc) stop() {
	if c.cmd == nil {
		return
	}
	_ = syscall.Kill(c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
	c.cmd = nil
}

// installSettings writes the namespace's argocd-cm with an installationID
// of its own, as two installations sharing a cluster must have: each run's
// controller claims its own app "chaos" only, not the previous run's
// (whose namespace may still be terminating).
func installSettings(ctx context.Context, kube client.Client, ns string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cm"},
		Data: map[string]string{"installationID": ns}}
	return kube.Create(ctx, cm)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// apiServer stops and starts the local cluster's kube-apiserver through
// its supervisor's signals.
type apiServer struct {
	env *testenv.Env
}

func (a apiServer) supervisorPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(a.env.Dir, "state.json"))
	if err != nil {
		return 0, err
	}
	var st struct {
		SupervisorPID int `json:"supervisorPID"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.SupervisorPID <= 0 {
		return 0, fmt.Errorf("no supervisor PID in %s/state.json: %w", a.env.Dir, err)
	}
	return st.SupervisorPID, nil
}

// stop stops kube-apiserver and waits until it no longer answers.
func (a apiServer) stop(ctx context.Context) error {
	pid, err := a.supervisorPID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		return err
	}
	return a.waitAnswer(ctx, false, 30*time.Second)
}

// start starts kube-apiserver again and waits until it is ready.
func (a apiServer) start(ctx context.Context) error {
	pid, err := a.supervisorPID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		return err
	}
	return a.waitAnswer(ctx, true, 90*time.Second)
}

func (a apiServer) waitAnswer(ctx context.Context, ready bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		err := a.env.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(rctx).Error()
		cancel()
		if (err == nil) == ready {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver ready=%v not reached within %s", ready, timeout)
}

// gitOutage moves a repository away and back, as a Git server that goes
// down and comes back.
type gitOutage struct {
	dir string
}

func (g gitOutage) stop() error  { return os.Rename(g.dir, g.dir+".away") }
func (g gitOutage) start() error { return os.Rename(g.dir+".away", g.dir) }
