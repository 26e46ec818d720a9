package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
)

// DefaultMaxWebhookBytes caps a webhook body, as Argo CD's default does.
const DefaultMaxWebhookBytes = 50 << 20

// refreshTimeout bounds the refreshes one push triggers.
const refreshTimeout = time.Minute

// AppLister lists the Applications a webhook may refresh.
type AppLister interface {
	ListApplications(ctx context.Context) ([]v1alpha1.Application, error)
}

// Refresher requests a refresh of one Application. It must return quickly:
// it records the request; the refresh itself happens later.
type Refresher interface {
	Refresh(ctx context.Context, namespace, name string, t appclient.RefreshType) error
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
}

// Webhook handles POST /api/webhook from GitHub (events push and ping).
type Webhook struct {
	opts WebhookOptions
}

// NewWebhook returns a Webhook.
func NewWebhook(o WebhookOptions) *Webhook {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxWebhookBytes
	}
	return &Webhook{opts: o}
}

// ServeHTTP checks the request, then answers ping, refreshes on push and
// ignores other events with 200.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook accepts POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("payload larger than %d bytes", h.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, "cannot read payload", http.StatusBadRequest)
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	if event == "" {
		http.Error(w, "missing X-GitHub-Event header: only GitHub webhooks are supported", http.StatusBadRequest)
		return
	}
	if status, msg := h.verify(ctx, r, body); status != http.StatusOK {
		http.Error(w, msg, status)
		return
	}
	switch event {
	case "ping":
		writeText(w, http.StatusOK, "pong")
	case "push":
		h.handlePush(ctx, w, r, body)
	default:
		slog.DebugContext(ctx, "webhook event ignored", "event", event)
		writeText(w, http.StatusOK, fmt.Sprintf("event %q ignored", event))
	}
}

// verify checks X-Hub-Signature-256 when a secret is configured. It never
// logs the secret or the signature.
func (h *Webhook) verify(ctx context.Context, r *http.Request, body []byte) (int, string) {
	if h.opts.Secrets == nil {
		return http.StatusOK, ""
	}
	secret, err := h.opts.Secrets.GitHubWebhookSecret(ctx)
	if err != nil {
		slog.ErrorContext(ctx, "cannot read the webhook secret", "error", err)
		return http.StatusServiceUnavailable, "cannot read the webhook secret"
	}
	if secret == "" {
		return http.StatusOK, ""
	}
	header := r.Header.Get("X-Hub-Signature-256")
	if header == "" {
		slog.WarnContext(ctx, "webhook rejected: signature missing", "remote", r.RemoteAddr)
		return http.StatusBadRequest, "missing X-Hub-Signature-256 header: the webhook secret is set"
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil {
		slog.WarnContext(ctx, "webhook rejected: malformed signature", "remote", r.RemoteAddr)
		return http.StatusBadRequest, "malformed X-Hub-Signature-256 header: want sha256=<hex>"
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		slog.WarnContext(ctx, "webhook rejected: signature mismatch", "remote", r.RemoteAddr)
		return http.StatusBadRequest, "X-Hub-Signature-256 does not match the payload and the webhook secret"
	}
	return http.StatusOK, ""
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

func (h *Webhook) handlePush(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte) {
	payload, err := formPayload(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ev pushEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		http.Error(w, "invalid push payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	if ev.Ref == "" || ev.Repository.HTMLURL == "" && ev.Repository.CloneURL == "" {
		http.Error(w, "invalid push payload: ref and repository.html_url are required", http.StatusBadRequest)
		return
	}
	if h.opts.Apps == nil || h.opts.Refresher == nil {
		http.Error(w, "webhook refreshes are not configured", http.StatusServiceUnavailable)
		return
	}
	push := newPush(&ev)
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

// formPayload returns the JSON document of a push: the body itself, or its
// `payload` field when GitHub sends application/x-www-form-urlencoded.
func formPayload(r *http.Request, body []byte) ([]byte, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return nil, errors.New("invalid form payload: want a payload field")
	}
	return []byte(form.Get("payload")), nil
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
		if err := h.opts.Refresher.Refresh(ctx, app.Namespace, app.Name, appclient.RefreshNormal); err != nil {
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
