package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Limits bound one plugin run.
type Limits struct {
	// Timeout bounds each command (default 90s, Argo CD's exec timeout).
	Timeout time.Duration
	// MaxOutput bounds what a command may print on stdout (default 64 MiB).
	MaxOutput int64
	// MaxSource bounds the unpacked repository (default 1 GiB).
	MaxSource int64
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 90 * time.Second
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 64 << 20
	}
	if l.MaxSource <= 0 {
		l.MaxSource = 1 << 30
	}
	return l
}

// stderrTail is how much of a failed command's stderr its error keeps.
const stderrTail = 4 << 10

// killGrace is how long a timed-out command's processes get between
// SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// CommandError is a plugin command that failed: its exit status or
// timeout, and the end of its stderr.
type CommandError struct {
	Plugin string
	Step   string // init, generate, discover or parameters
	Args   string
	Cause  error
	Stderr string
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("plugin %s: %s `%s` failed: %v", e.Plugin, e.Step, e.Args, e.Cause)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Cause }

// errOutputTooLarge is a command that printed more than MaxOutput.
var errOutputTooLarge = errors.New("output too large")

// cappedBuffer keeps at most max bytes and reports when more came.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int64
	overflow bool
	onFull   func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - int64(c.buf.Len()); int64(len(p)) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.overflow {
			c.overflow = true
			c.onFull()
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// runner runs one plugin's commands in a work folder.
type runner struct {
	plugin string
	dir    string
	env    []string
	limits Limits
}

// run runs c in r.dir and returns its stdout. The command runs in its own
// process group, which is killed (SIGTERM, then SIGKILL) on timeout, when
// ctx ends or when the output passes the cap.
func (r *runner) run(ctx context.Context, step string, c Command) (string, error) {
	if len(c.Command) == 0 {
		return "", &CommandError{Plugin: r.plugin, Step: step, Cause: errors.New("command is empty")}
	}
	timedOut := fmt.Errorf("still running after %s", r.limits.Timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, r.limits.Timeout, timedOut)
	defer cancel()
	args := append(c.Command[1:len(c.Command):len(c.Command)], c.Args...)
	cmd := exec.Command(c.Command[0], args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that keeps stdout open must not hold Wait past the leader.
	cmd.WaitDelay = killGrace
	full := make(chan struct{})
	stdout := &cappedBuffer{max: r.limits.MaxOutput, onFull: func() { close(full) }}
	stderr := &tailBuffer{max: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmdErr := func(cause error) error {
		return &CommandError{Plugin: r.plugin, Step: step, Args: strings.Join(append(c.Command[:len(c.Command):len(c.Command)], c.Args...), " "),
			Cause: cause, Stderr: strings.TrimSpace(string(stderr.buf))}
	}
	if err := cmd.Start(); err != nil {
		return "", cmdErr(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var cause error
	select {
	case err := <-done:
		cause = err
	case <-ctx.Done():
		cause = context.Cause(ctx)
		killGroup(cmd.Process.Pid, done)
	case <-full:
		cause = fmt.Errorf("%w: printed more than %d bytes", errOutputTooLarge, r.limits.MaxOutput)
		killGroup(cmd.Process.Pid, done)
	}
	if cause != nil {
		return "", cmdErr(cause)
	}
	return strings.TrimSuffix(stdout.buf.String(), "\n"), nil
}

// killGroup ends the process group pgid: SIGTERM, then SIGKILL after
// killGrace if the leader has not exited, and waits for the leader.
func killGroup(pgid int, done <-chan error) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done: //nolint:errcheck // how it exited is the caller's error already
	case <-time.After(killGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done //nolint:errcheck // how it exited is the caller's error already
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // children the leader left behind
}
