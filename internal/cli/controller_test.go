package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/testenv"
)

// TestControllerServes runs `wavecd controller` and checks that it serves
// the probes, the metrics and the webhook on --listen until it is stopped.
func TestControllerServes(t *testing.T) {
	ns, _ := appCluster(t)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The command sets the default logger: logs go nowhere, as other tests
	// of the package log too.
	root := NewRootCommand(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	root.SetArgs([]string{"controller", "--kubeconfig", testenv.Get(t).Kubeconfig, "-n", ns,
		"--listen", addr, "--cache-dir", t.TempDir(), "--leader-elect=false"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	base := "http://" + addr
	waitFor(t, 30*time.Second, base+"/readyz")
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ok", "/metrics": "go_goroutines"} {
		expectAnswer(t, http.MethodGet, base+path, "", want)
	}
	expectAnswer(t, http.MethodPost, base+"/api/webhook", "ping", "pong")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("controller command: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the controller command did not stop within 30s of its context")
	}
}

// freeAddr returns a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitFor(t *testing.T, timeout time.Duration, url string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer 200 within %s", url, timeout)
}

// expectAnswer sends a request (a GitHub event when event is set) and
// checks that the answer is 200 with want in the body.
func expectAnswer(t *testing.T, method, url, event, want string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if event != "" {
		req.Header.Set("X-GitHub-Event", event)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("%s %s = %d %q, want 200 and %q", method, url, resp.StatusCode, body, want)
	}
}
