package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	wmetrics "github.com/wavecd/wavecd/internal/metrics"
)

// runningServer is a Server serving on a free 127.0.0.1 port.
type runningServer struct {
	base   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Serve's result, set when done is closed
}

// startServer serves s until the test ends.
func startServer(t *testing.T, s *Server) *runningServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rs := &runningServer{base: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		rs.err = s.Serve(ctx, ln)
		close(rs.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-rs.done
	})
	return rs
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	metrics, err := wmetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ready := errors.New("informers not synced")
	s := New(Options{
		Webhook: NewWebhook(WebhookOptions{Apps: staticApps{}, Refresher: &recordingRefresher{}}),
		Metrics: metrics,
		Ready:   func(context.Context) error { return ready },
	})
	base := startServer(t, s).base
	tests := map[string]struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		"healthz":             {"/healthz", 200, "ok"},
		"readyz not ready":    {"/readyz", 503, "not ready: informers not synced"},
		"metrics":             {"/metrics", 200, "go_goroutines"},
		"webhook is POST":     {"/api/webhook", 405, "POST only"},
		"unknown path is 404": {"/nope", 404, "not found"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, body := get(t, base+tc.path)
			if code != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tc.path, code, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	ready = nil
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Errorf("readyz after ready = %d %q, want 200", code, body)
	}
}

func TestServerShutsDownGracefully(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	s := New(Options{Webhook: slow, ShutdownTimeout: 10 * time.Second})
	rs := startServer(t, s)
	result := make(chan string, 1)
	go func() {
		resp, err := http.Post(rs.base+"/api/webhook", "application/json", strings.NewReader("{}"))
		if err != nil {
			result <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		result <- string(b)
	}()
	<-started
	rs.cancel()
	select {
	case <-rs.done:
		t.Fatalf("Serve returned %v before the request in flight finished", rs.err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if got := <-result; got != "finished" {
		t.Errorf("request in flight got %q, want finished", got)
	}
	<-rs.done
	if rs.err != nil {
		t.Errorf("Serve = %v, want nil after a graceful shutdown", rs.err)
	}
}

func TestStartReportsListenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = New(Options{Addr: ln.Addr().String()}).Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("Start on a busy port = %v, want a listen error naming the address", err)
	}
}
