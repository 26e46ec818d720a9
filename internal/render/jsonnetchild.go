package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// go-jsonnet evaluates tail calls by Go recursion and cannot be
// interrupted: a file that recurses without end (`tailstrict`, or std
// functions over huge ranges) grows the goroutine's stack until the Go
// runtime aborts the whole process. So a binary that calls
// EnableJsonnetChild (wavecd itself, and the test binaries) evaluates
// Jsonnet in a child process of itself: a crash or a timeout ends only the
// child. Without it, Jsonnet is evaluated in process.

// jsonnetChildEnv marks a process started to evaluate Jsonnet.
const jsonnetChildEnv = "WAVECD_JSONNET_CHILD"

// maxJsonnetChildOutput bounds what a child may answer.
const maxJsonnetChildOutput = 256 << 20

var jsonnetChild struct {
	sync.Mutex
	binary string
}

// EnableJsonnetChild makes Jsonnet run in child processes of this binary,
// which must call RunJsonnetChild first thing in main when
// IsJsonnetChild reports it was started as one.
func EnableJsonnetChild() error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("jsonnet child: %w", err)
	}
	jsonnetChild.Lock()
	defer jsonnetChild.Unlock()
	jsonnetChild.binary = self
	return nil
}

func jsonnetChildBinary() string {
	jsonnetChild.Lock()
	defer jsonnetChild.Unlock()
	return jsonnetChild.binary
}

// IsJsonnetChild reports whether this process was started to evaluate
// Jsonnet.
func IsJsonnetChild() bool { return os.Getenv(jsonnetChildEnv) == "1" }

// jsonnetRequest is what a child evaluates; the repository follows it on
// stdin as tar.gz.
type jsonnetRequest struct {
	AppDir string                            `json:"appDir"`
	Opts   v1alpha1.ApplicationSourceJsonnet `json:"opts"`
	Env    v1alpha1.Env                      `json:"env"`
	Files  []string                          `json:"files"`
}

// jsonnetResponse is a child's answer: each file's JSON, or the first
// error.
type jsonnetResponse struct {
	Outputs []string `json:"outputs,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// RunJsonnetChild serves one request of a parent on stdin and stdout and
// returns the exit code.
func RunJsonnetChild(stdin io.Reader, stdout io.Writer) int {
	resp := serveJsonnet(context.Background(), stdin)
	if err := json.NewEncoder(stdout).Encode(resp); err != nil {
		return 1
	}
	return 0
}

func serveJsonnet(ctx context.Context, stdin io.Reader) jsonnetResponse {
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		return jsonnetResponse{Error: "read request: " + err.Error()}
	}
	var req jsonnetRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return jsonnetResponse{Error: "read request: " + err.Error()}
	}
	tree, err := source.ReadTar(ctx, in, "", 1<<30)
	if err != nil {
		return jsonnetResponse{Error: "read repository: " + err.Error()}
	}
	j := &jsonnetEval{tree: tree, appDir: req.AppDir, opts: req.Opts, env: req.Env, timeout: jsonnetTimeout}
	var resp jsonnetResponse
	for _, file := range req.Files {
		out, err := j.evaluate(ctx, file)
		if err != nil {
			return jsonnetResponse{Error: err.Error()}
		}
		resp.Outputs = append(resp.Outputs, out)
	}
	return resp
}

// evaluateInChild evaluates files in a child process of binary, killed
// after the timeout of each file has passed.
func (j *jsonnetEval) evaluateInChild(ctx context.Context, binary string, files []string) ([]string, error) {
	header, err := json.Marshal(jsonnetRequest{AppDir: j.appDir, Opts: j.opts, Env: j.env, Files: files})
	if err != nil {
		return nil, err
	}
	timeout := j.timeout * time.Duration(len(files))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary)
	cmd.Env = []string{jsonnetChildEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	var stdout bytes.Buffer
	stderr := &headWriter{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &stdout, left: maxJsonnetChildOutput}, stderr
	go func() {
		_, err := pw.Write(append(header, '\n'))
		if err == nil {
			err = source.WriteTar(ctx, j.tree, pw, source.TarOptions{})
		}
		pw.CloseWithError(err)
	}()
	err = cmd.Run()
	_ = pr.Close()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: evaluate jsonnet: still running after %s", strings.Join(files, ", "), timeout)
	case err != nil:
		return nil, fmt.Errorf("%s: evaluate jsonnet: the evaluation failed (%w): %s", strings.Join(files, ", "), err, firstLine(stderr.String()))
	}
	var resp jsonnetResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("evaluate jsonnet: bad answer from the child process: %w", err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	if len(resp.Outputs) != len(files) {
		return nil, fmt.Errorf("evaluate jsonnet: the child process answered %d of %d files", len(resp.Outputs), len(files))
	}
	return resp.Outputs, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// limitedWriter writes at most left bytes and fails after.
type limitedWriter struct {
	w    io.Writer
	left int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, fmt.Errorf("more than %d bytes", maxJsonnetChildOutput)
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

// headWriter keeps the first max bytes written (a Go crash's first line
// says what happened).
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (t *headWriter) Write(p []byte) (int, error) {
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *headWriter) String() string { return t.buf.String() }
