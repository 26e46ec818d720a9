package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingBody is an endless body of spaces that counts what is read of
// it, without holding it in memory.
type countingBody struct {
	n     atomic.Int64
	limit int64
	// block, when set, makes Read wait until it is closed.
	block chan struct{}
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.block != nil {
		<-b.block
	}
	left := b.limit - b.n.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), left)
	for i := range p[:n] {
		p[i] = ' '
	}
	b.n.Add(n)
	return int(n), nil
}

func (b *countingBody) Close() error { return nil }

func bodyRequest(event string, body *countingBody, contentLength int64) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/webhook", nil)
	r.Body, r.ContentLength = body, contentLength
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-GitHub-Event", event)
	return r
}

// TestCWE770WebhookBodiesRefusedEarly guards against allocation of
// resources without limits (CWE-770) through the webhook, which anyone
// who can reach the server may call: oversized and unsigned bodies are
// refused before they are read, a badly signed one is read without being
// held, and a flood is refused instead of queued.
func TestCWE770WebhookBodiesRefusedEarly(t *testing.T) {
	apps := staticApps{testApp("seed-main", "https://github.com/acme/seed.git", "main")}
	const hundredMB = 100 << 20

	t.Run("a declared 100 MB body is refused unread", func(t *testing.T) {
		body := &countingBody{limit: hundredMB}
		rec := httptest.NewRecorder()
		NewWebhook(WebhookOptions{Apps: apps, Refresher: &recordingRefresher{}}).ServeHTTP(rec, bodyRequest("push", body, hundredMB))
		if rec.Code != http.StatusRequestEntityTooLarge || body.n.Load() != 0 {
			t.Errorf("got %d after reading %d bytes, want 413 with nothing read", rec.Code, body.n.Load())
		}
	})

	t.Run("an unsigned body is refused unread when a secret is set", func(t *testing.T) {
		body := &countingBody{limit: 40 << 20}
		rec := httptest.NewRecorder()
		NewWebhook(WebhookOptions{Apps: apps, Refresher: &recordingRefresher{}, Secrets: staticSecret{value: testSecret}}).
			ServeHTTP(rec, bodyRequest("push", body, -1))
		if rec.Code != http.StatusBadRequest || body.n.Load() != 0 {
			t.Errorf("got %d after reading %d bytes, want 400 with nothing read", rec.Code, body.n.Load())
		}
	})

	t.Run("a 40 MB body with a wrong signature is streamed, not held", func(t *testing.T) {
		body := &countingBody{limit: 40 << 20}
		r := bodyRequest("push", body, -1)
		r.Header.Set("X-Hub-Signature-256", sign("guess", "anything"))
		rec := httptest.NewRecorder()
		h := NewWebhook(WebhookOptions{Apps: apps, Refresher: &recordingRefresher{}, Secrets: staticSecret{value: testSecret}})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h.ServeHTTP(rec, r)
		runtime.ReadMemStats(&after)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "does not match") {
			t.Errorf("got %d %q, want 400 signature mismatch", rec.Code, rec.Body.String())
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
			t.Errorf("reading the body allocated %d MiB, want it streamed through the HMAC (under 4 MiB)", grew>>20)
		}
	})

	t.Run("a streamed body over the cap stops at the cap", func(t *testing.T) {
		body := &countingBody{limit: hundredMB}
		rec := httptest.NewRecorder()
		NewWebhook(WebhookOptions{Apps: apps, Refresher: &recordingRefresher{}}).ServeHTTP(rec, bodyRequest("push", body, -1))
		if rec.Code != http.StatusRequestEntityTooLarge || body.n.Load() > DefaultMaxWebhookBytes+64<<10 {
			t.Errorf("got %d after reading %d bytes, want 413 after at most the cap", rec.Code, body.n.Load())
		}
	})

	t.Run("a flood beyond the concurrent requests is refused", func(t *testing.T) {
		h := NewWebhook(WebhookOptions{Apps: apps, Refresher: &recordingRefresher{}, MaxConcurrent: 1})
		slow := &countingBody{limit: 10, block: make(chan struct{})}
		done := make(chan int)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, bodyRequest("ping", slow, -1))
			done <- rec.Code
		}()
		deadline := time.Now().Add(5 * time.Second)
		for len(h.slots) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, bodyRequest("ping", &countingBody{limit: 10}, -1))
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("second request got %d, want 503 with Retry-After while the first is handled", rec.Code)
		}
		close(slow.block)
		if code := <-done; code != http.StatusOK {
			t.Errorf("first request got %d, want 200", code)
		}
	})
}
