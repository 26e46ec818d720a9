// Package notifytest provides receivers for tests of notifications: an
// HTTP server on 127.0.0.1 that answers as a webhook, Slack's Web API, a
// Teams connector, GitHub's REST API and Opsgenie do, and a small SMTP
// server with STARTTLS. Both record what they receive.
package notifytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one request a Receiver got.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Form is the body of a form post (Slack).
	Form url.Values
	// Status is what the receiver answered.
	Status int
}

// Receiver is an HTTP server on 127.0.0.1 that records requests and
// answers by path:
//
//	/api/chat.postMessage, /api/chat.update   Slack: {"ok": true, "ts": ...}
//	/teams/...                                 a Teams connector: "1"
//	/api/v3/app/installations/N/access_tokens  GitHub: an installation token
//	/api/v3/repos/O/R/deployments              GitHub: [] (GET), {"id": 7} (POST)
//	anything else                              200 {}
type Receiver struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	requests []Request
	failures []int
	blocked  chan struct{}
	arrived  chan struct{}
}

// NewReceiver starts a receiver, stopped when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{arrived: make(chan struct{}, 1024)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(func() {
		r.Unblock()
		r.srv.Close()
	})
	return r
}

// FailNext answers the next requests with these statuses, in order.
func (r *Receiver) FailNext(statuses ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, statuses...)
}

// Block holds every request until Unblock.
func (r *Receiver) Block() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.blocked == nil {
		r.blocked = make(chan struct{})
	}
}

// Unblock lets held requests through.
func (r *Receiver) Unblock() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.blocked != nil {
		close(r.blocked)
		r.blocked = nil
	}
}

// Requests returns what was received so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// WaitFor waits until match holds for n requests and returns them, or
// fails the test after timeout.
func (r *Receiver) WaitFor(t testing.TB, n int, timeout time.Duration, match func(Request) bool) []Request {
	t.Helper()
	deadline := time.After(timeout)
	for {
		var got []Request
		for _, q := range r.Requests() {
			if match(q) {
				got = append(got, q)
			}
		}
		if len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("receiver: %d matching requests after %s, want %d; got %s", len(got), timeout, n, r.describe())
			return nil
		}
	}
}

func (r *Receiver) describe() string {
	var parts []string
	for _, q := range r.Requests() {
		parts = append(parts, fmt.Sprintf("%s %s -> %d", q.Method, q.Path, q.Status))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	q := Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Header: req.Header.Clone(), Body: body}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		q.Form, _ = url.ParseQuery(string(body))
	}
	r.mu.Lock()
	blocked := r.blocked
	status := http.StatusOK
	if len(r.failures) > 0 {
		status, r.failures = r.failures[0], r.failures[1:]
	}
	answer := r.answer(q)
	if status != http.StatusOK {
		answer = fmt.Sprintf(`{"message": "receiver refused with %d"}`, status)
	}
	q.Status = status
	r.requests = append(r.requests, q)
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	if blocked != nil {
		select {
		case <-blocked:
		case <-req.Context().Done():
		}
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

// answer is the body of a successful answer to q.
func (r *Receiver) answer(q Request) string {
	switch {
	case strings.HasSuffix(q.Path, "/chat.postMessage") || strings.HasSuffix(q.Path, "/chat.update"):
		b, _ := json.Marshal(map[string]any{"ok": true, "channel": "C" + strings.ToUpper(q.Form.Get("channel")), "ts": fmt.Sprintf("%d.000100", time.Now().UnixNano())})
		return string(b)
	case strings.HasPrefix(q.Path, "/teams/"):
		return "1"
	case strings.HasSuffix(q.Path, "/access_tokens"):
		b, _ := json.Marshal(map[string]any{"token": "ghs_installation", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		return string(b)
	case strings.HasSuffix(q.Path, "/deployments") && q.Method == http.MethodGet:
		return "[]"
	case strings.HasSuffix(q.Path, "/deployments"):
		return `{"id": 7}`
	}
	return "{}"
}
