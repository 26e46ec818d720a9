package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// DefaultMaxWebhookBytes caps a webhook body, as Argo CD's default does.
const DefaultMaxWebhookBytes = 50 << 20

// DefaultMaxConcurrentWebhooks bounds the webhook requests handled at
// once: a flood is refused instead of queued.
const DefaultMaxConcurrentWebhooks = 8

// refreshTimeout bounds the refreshes one push triggers.
const refreshTimeout = time.Minute

// AppLister lists the Applications a webhook may refresh.
type AppLister interface {
	ListApplications(ctx context.Context) ([]v1alpha1.Application, error)
}

// Refresher requests a refresh of one Application. It must return quickly:
// it records the request; the refresh itself happens later.
type Refresher interface {
	Refresh(ctx context.Context, namespace, name string, t application.RefreshType) error
}

// SecretSource gives the shared secret of GitHub webhooks; "" means none
// is configured and unsigned payloads are accepted.
type SecretSource interface {
	GitHubWebhookSecret(ctx context.Context) (string, error)
}

// WebhookOptions configure a Webhook.
type WebhookOptions struct {
	Apps      AppLister
	Refresher Refresher
	// Secrets is read on every request, so a changed secret applies at
	// once; nil means no secret.
	Secrets SecretSource
	// MaxBodyBytes caps the body (default DefaultMaxWebhookBytes).
	MaxBodyBytes int64
	// MaxConcurrent bounds the requests handled at once (default
	// DefaultMaxConcurrentWebhooks); more are refused with 503.
	MaxConcurrent int
}

// Webhook handles POST /api/webhook from GitHub (events push and ping).
type Webhook struct {
	opts  WebhookOptions
	slots chan struct{}
}

// NewWebhook returns a Webhook.
func NewWebhook(o WebhookOptions) *Webhook {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxWebhookBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrentWebhooks
	}
	return &Webhook{opts: o, slots: make(chan struct{}, o.MaxConcurrent)}
}

// ServeHTTP checks the request, then answers ping, refreshes on push and
// ignores other events with 200. What an attacker can send costs little:
// a body over the cap is refused from its Content-Length before it is
// read, a request without the signature a secret asks for before its body
// is read, and a body is streamed through the HMAC into a spool holding
// at most 1 MiB in memory, decoded only once its signature matches. At
// most MaxConcurrent requests are handled at once; more are refused with
// 503.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook accepts POST only", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		h.refuseTooLarge(w)
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	if event == "" {
		http.Error(w, "missing X-GitHub-Event header: only GitHub webhooks are supported", http.StatusBadRequest)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many webhook requests at once", http.StatusServiceUnavailable)
		return
	}
	mac, status, msg := h.signature(ctx, r)
	if status != http.StatusOK {
		http.Error(w, msg, status)
		return
	}
	ev, err := h.read(w, r, event, mac)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.refuseTooLarge(w)
		return
	case errors.Is(err, errBadSignature):
		slog.WarnContext(ctx, "webhook rejected: signature mismatch", "remote", r.RemoteAddr)
		http.Error(w, "X-Hub-Signature-256 does not match the payload and the webhook secret", http.StatusBadRequest)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch event {
	case "ping":
		writeText(w, http.StatusOK, "pong")
	case "push":
		h.handlePush(ctx, w, ev)
	default:
		slog.DebugContext(ctx, "webhook event ignored", "event", event)
		writeText(w, http.StatusOK, fmt.Sprintf("event %q ignored", event))
	}
}

func (h *Webhook) refuseTooLarge(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("payload larger than %d bytes", h.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
}

var errBadSignature = errors.New("signature mismatch")

// read reads the body once, through the HMAC when mac is set, into a
// spool that holds at most spoolMemory bytes in memory; only a body whose
// signature matches (or any body when no secret is set) is decoded.
func (h *Webhook) read(w http.ResponseWriter, r *http.Request, event string, mac *signedBody) (*pushEvent, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	if mac != nil {
		body = io.TeeReader(body, mac.hash)
	}
	sp := &spool{}
	defer sp.Close()
	if _, err := io.Copy(sp, body); err != nil {
		return nil, err
	}
	if mac != nil && !hmac.Equal(mac.want, mac.hash.Sum(nil)) {
		return nil, errBadSignature
	}
	if event != "push" {
		return nil, nil
	}
	content, err := sp.Reader()
	if err != nil {
		return nil, err
	}
	return decodePush(r, content)
}

// spoolMemory is how much of a webhook body is held in memory; the rest
// goes to a temporary file until the signature is checked.
const spoolMemory = 1 << 20

// spool holds a body: its first spoolMemory bytes in memory, the rest in
// a temporary file, removed by Close.
type spool struct {
	mem  bytes.Buffer
	file *os.File
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "wavecd-webhook-*")
		if err != nil {
			return 0, fmt.Errorf("spool webhook body: %w", err)
		}
		s.file = f
	}
	return s.file.Write(p)
}

// Reader reads the whole body from its start.
func (s *spool) Reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool webhook body: %w", err)
	}
	return io.MultiReader(bytes.NewReader(s.mem.Bytes()), s.file), nil
}

func (s *spool) Close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
}

// signedBody is the HMAC a body must match.
type signedBody struct {
	hash hash.Hash
	want []byte
}

// signature reads the webhook secret and the request's signature header
// before the body is read; nil means no secret is configured. It never
// logs the secret or the signature.
func (h *Webhook) signature(ctx context.Context, r *http.Request) (*signedBody, int, string) {
	if h.opts.Secrets == nil {
		return nil, http.StatusOK, ""
	}
	secret, err := h.opts.Secrets.GitHubWebhookSecret(ctx)
	if err != nil {
		slog.ErrorContext(ctx, "cannot read the webhook secret", "error", err)
		return nil, http.StatusServiceUnavailable, "cannot read the webhook secret"
	}
	if secret == "" {
		return nil, http.StatusOK, ""
	}
	header := r.Header.Get("X-Hub-Signature-256")
	if header == "" {
		slog.WarnContext(ctx, "webhook rejected: signature missing", "remote", r.RemoteAddr)
		return nil, http.StatusBadRequest, "missing X-Hub-Signature-256 header: the webhook secret is set"
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(got) != sha256.Size {
		slog.WarnContext(ctx, "webhook rejected: malformed signature", "remote", r.RemoteAddr)
		return nil, http.StatusBadRequest, "malformed X-Hub-Signature-256 header: want sha256=<hex>"
	}
	return &signedBody{hash: hmac.New(sha256.New, []byte(secret)), want: got}, http.StatusOK, ""
}

// pushEvent holds the fields of GitHub's push payload that matter here.
type pushEvent struct {
	Ref        string `json:"ref"`
	Repository struct {
		HTMLURL       string `json:"html_url"`
		CloneURL      string `json:"clone_url"`
		SSHURL        string `json:"ssh_url"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	Commits []struct {
		Added    []string `json:"added"`
		Modified []string `json:"modified"`
		Removed  []string `json:"removed"`
	} `json:"commits"`
}

func (h *Webhook) handlePush(ctx context.Context, w http.ResponseWriter, ev *pushEvent) {
	if h.opts.Apps == nil || h.opts.Refresher == nil {
		http.Error(w, "webhook refreshes are not configured", http.StatusServiceUnavailable)
		return
	}
	push := newPush(ev)
	// GitHub gives up after 10 s and closes the connection; the refreshes
	// go on regardless, within their own bound.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	refreshed, failed, err := h.refresh(rctx, push)
	if err != nil {
		slog.ErrorContext(ctx, "webhook: cannot list applications", "error", err)
		http.Error(w, "cannot list applications", http.StatusInternalServerError)
		return
	}
	slog.InfoContext(ctx, "webhook push", "repo", ev.Repository.HTMLURL, "revision", push.revision,
		"refreshed", refreshed, "failed", failed)
	if failed > 0 {
		http.Error(w, fmt.Sprintf("refreshed %d application(s), %d failed", refreshed, failed), http.StatusInternalServerError)
		return
	}
	writeText(w, http.StatusOK, fmt.Sprintf("refreshed %d application(s)", refreshed))
}

// decodePush decodes a push event from body: JSON as it streams, or the
// `payload` field when GitHub sends application/x-www-form-urlencoded.
func decodePush(r *http.Request, body io.Reader) (*pushEvent, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		form, err := url.ParseQuery(string(raw))
		if err != nil || form.Get("payload") == "" {
			return nil, errors.New("invalid form payload: want a payload field")
		}
		body = strings.NewReader(form.Get("payload"))
	}
	return parsePushEvent(body)
}

// parsePushEvent decodes GitHub's push payload and checks the fields a
// refresh needs.
func parsePushEvent(r io.Reader) (*pushEvent, error) {
	var ev pushEvent
	if err := json.NewDecoder(r).Decode(&ev); err != nil {
		return nil, fmt.Errorf("invalid push payload: %w", err)
	}
	if ev.Ref == "" || ev.Repository.HTMLURL == "" && ev.Repository.CloneURL == "" {
		return nil, errors.New("invalid push payload: ref and repository.html_url are required")
	}
	return &ev, nil
}

// push is a parsed push event.
type push struct {
	repoKeys    map[string]bool
	revision    string
	touchedHead bool
	changed     []string
}

func newPush(ev *pushEvent) *push {
	p := &push{repoKeys: map[string]bool{}, revision: parseRevision(ev.Ref)}
	for _, u := range []string{ev.Repository.HTMLURL, ev.Repository.CloneURL, ev.Repository.SSHURL} {
		if u != "" {
			p.repoKeys[NormalizeRepoURL(u)] = true
		}
	}
	p.touchedHead = ev.Repository.DefaultBranch == p.revision
	for _, c := range ev.Commits {
		p.changed = append(p.changed, c.Added...)
		p.changed = append(p.changed, c.Modified...)
		p.changed = append(p.changed, c.Removed...)
	}
	return p
}

// affects reports whether the push changes what app renders.
func (p *push) affects(app *v1alpha1.Application) bool {
	for _, src := range app.Spec.GetSources() {
		if revisionMatches(src.TargetRevision, p.revision, p.touchedHead) && sameRepo(src.RepoURL, p.repoKeys) {
			return filesChanged(refreshPaths(app), p.changed)
		}
	}
	return false
}

// refresh refreshes every app the push affects and counts the results.
func (h *Webhook) refresh(ctx context.Context, p *push) (refreshed, failed int, err error) {
	apps, err := h.opts.Apps.ListApplications(ctx)
	if err != nil {
		return 0, 0, err
	}
	for i := range apps {
		app := &apps[i]
		if !p.affects(app) {
			continue
		}
		if err := h.opts.Refresher.Refresh(ctx, app.Namespace, app.Name, application.RefreshNormal); err != nil {
			slog.WarnContext(ctx, "webhook: refresh failed", "app", app.Namespace+"/"+app.Name, "error", err)
			failed++
			continue
		}
		refreshed++
	}
	return refreshed, failed, nil
}

func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
