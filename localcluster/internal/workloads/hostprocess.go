package workloads

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wavecd/wavecd/localcluster/internal/forkthread"
	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// hostProcess is one run of a pod's process: the leader of its own process
// group, killed with the workloads controller (parent-death signal).
type hostProcess struct {
	pid     int
	started time.Time
	done    chan struct{}
	// exit and finished are set before done closes.
	exit     kubelet.Exit
	finished time.Time

	mu sync.Mutex
	// killAt is when a stop sends SIGKILL; zero until stopped.
	killAt time.Time
}

// start runs l in dir with its output appended to logPath; onExit is
// called once the process has ended.
func startHost(starter *forkthread.Starter, l launch, dir, logPath string, onExit func()) (*hostProcess, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open process log: %w", err)
	}
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.Dir, cmd.Env = dir, l.environ()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	fmt.Fprintf(logFile, "==> %s starting: %s\n", time.Now().Format(time.RFC3339), strings.Join(l.argv, " "))
	if err := starter.Start(cmd); err != nil {
		fmt.Fprintf(logFile, "==> %s could not start: %v\n", time.Now().Format(time.RFC3339), err)
		_ = logFile.Close()
		return nil, err
	}
	hp := &hostProcess{pid: cmd.Process.Pid, started: time.Now(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		// Whatever the leader left behind in its group goes with it, as a
		// container's processes go with its main process.
		_ = syscall.Kill(-hp.pid, syscall.SIGKILL)
		hp.exit, hp.finished = exitOf(cmd.ProcessState, err), time.Now()
		fmt.Fprintf(logFile, "==> %s exited: code %d\n", hp.finished.Format(time.RFC3339), hp.exit.Code)
		_ = logFile.Close()
		close(hp.done)
		onExit()
	}()
	return hp, nil
}

// exitOf tells how a process ended, with a kubelet's reasons and exit
// codes (128+n for a process killed by signal n).
func exitOf(st *os.ProcessState, waitErr error) kubelet.Exit {
	if st == nil {
		return kubelet.Exit{Code: 128, Reason: kubelet.ReasonStartError, Message: fmt.Sprint(waitErr)}
	}
	code := int32(st.ExitCode())
	msg := ""
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int32(ws.Signal())
		msg = st.String() // "signal: terminated"
	}
	if code == 0 {
		return kubelet.Exit{Code: 0, Reason: kubelet.ReasonCompleted}
	}
	return kubelet.Exit{Code: code, Reason: kubelet.ReasonError, Message: msg}
}

// exited reports whether the process has ended.
func (hp *hostProcess) exited() bool {
	select {
	case <-hp.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL once grace has
// passed, and returns at once; done closes when the process has ended. A
// later stop can only bring the SIGKILL forward. It reports whether this
// was the first stop.
func (hp *hostProcess) stop(grace time.Duration) bool {
	if hp.exited() {
		return false
	}
	at := time.Now().Add(grace)
	hp.mu.Lock()
	first := hp.killAt.IsZero()
	if !first && !at.Before(hp.killAt) {
		hp.mu.Unlock()
		return false
	}
	hp.killAt = at
	hp.mu.Unlock()
	if first {
		if err := syscall.Kill(-hp.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			_ = syscall.Kill(-hp.pid, syscall.SIGKILL)
		}
	}
	go func() {
		select {
		case <-hp.done:
		case <-time.After(grace):
			_ = syscall.Kill(-hp.pid, syscall.SIGKILL)
		}
	}()
	return first
}

// ContainerIDScheme prefixes the container ID of a process-backed pod:
// "process://<pid>".
const ContainerIDScheme = "process://"

func (hp *hostProcess) containerID() string { return fmt.Sprintf("%s%d", ContainerIDScheme, hp.pid) }
