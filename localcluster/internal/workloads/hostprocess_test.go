package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/localcluster/internal/forkthread"
	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestHostProcessGroup(t *testing.T) {
	tests := map[string]struct {
		script string
		stop   bool // stop it, else let it exit
		want   kubelet.Exit
	}{
		"stop: SIGTERM reaches the whole group": {
			script: `sleep 300 & echo $! > child; wait`, stop: true,
			want: kubelet.Exit{Code: 143, Reason: kubelet.ReasonError, Message: "signal: terminated"},
		},
		"stop: SIGKILL once the grace period is over": {
			script: `trap "" TERM; sleep 300 & echo $! > child; while :; do wait; done`, stop: true,
			want: kubelet.Exit{Code: 137, Reason: kubelet.ReasonError, Message: "signal: killed"},
		},
		"exit: what the leader leaves behind is killed": {
			script: `sleep 300 & echo $! > child; exit 3`,
			want:   kubelet.Exit{Code: 3, Reason: kubelet.ReasonError},
		},
		"exit 0 is Completed": {
			script: `sleep 300 & echo $! > child; exit 0`,
			want:   kubelet.Exit{Code: 0, Reason: kubelet.ReasonCompleted},
		},
	}
	f := forkthread.New()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ended := make(chan struct{})
			hp, err := startHost(f, launch{argv: []string{"/bin/sh", "-c", tc.script}}, dir, filepath.Join(dir, "log"), func() { close(ended) })
			if err != nil {
				t.Fatal(err)
			}
			child := waitChild(t, dir)
			if tc.stop {
				hp.stop(300 * time.Millisecond)
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				hp.stop(0)
				t.Fatal("process did not end")
			}
			if diff := cmp.Diff(tc.want, hp.exit, cmp.AllowUnexported(kubelet.Exit{})); diff != "" {
				t.Errorf("exit (-want +got):\n%s", diff)
			}
			deadline := time.Now().Add(2 * time.Second)
			for alive(child) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(child) {
				t.Errorf("the process's child %d survived it", child)
			}
			if log, _ := os.ReadFile(filepath.Join(dir, "log")); !strings.Contains(string(log), "starting: /bin/sh -c") {
				t.Errorf("log %q does not record the start", log)
			}
		})
	}
}

func waitChild(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(dir, "child"))
		if pid, convErr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && convErr == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the process never wrote its child's pid")
	return 0
}

func TestHostProcessThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	_, err := startHost(forkthread.New(), launch{argv: []string{filepath.Join(dir, "missing")}}, dir, filepath.Join(dir, "log"), func() {})
	if err == nil {
		t.Fatal("a missing executable started")
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); !strings.Contains(string(log), "could not start") {
		t.Errorf("log %q does not record the failure", log)
	}
}

func TestHostProcessLaterStopBringsKillForward(t *testing.T) {
	dir := t.TempDir()
	ended := make(chan struct{})
	hp, err := startHost(forkthread.New(), launch{argv: []string{"/bin/sh", "-c", `trap "" TERM; echo $$ > child; while :; do sleep 1; done`}},
		dir, filepath.Join(dir, "log"), func() { close(ended) })
	if err != nil {
		t.Fatal(err)
	}
	waitChild(t, dir)
	if first := hp.stop(time.Hour); !first {
		t.Fatal("the first stop did not report itself as first")
	}
	if first := hp.stop(100 * time.Millisecond); first {
		t.Fatal("the second stop reported itself as first")
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		hp.stop(0)
		t.Fatal("the shorter grace period of the second stop did not apply")
	}
	if hp.exit.Code != 137 {
		t.Fatalf("exit %+v, want SIGKILL (137)", hp.exit)
	}
}
