package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

const testSecret = "It's a Secret to Everybody"

// pushPayload is a trimmed GitHub push to main of acme/seed that changes
// apps/a/deploy.yaml.
const pushPayload = `{
  "ref": "refs/heads/main",
  "before": "0000000000000000000000000000000000000000",
  "after": "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
  "repository": {
    "full_name": "acme/seed",
    "html_url": "https://github.com/acme/seed",
    "clone_url": "https://github.com/acme/seed.git",
    "ssh_url": "git@github.com:acme/seed.git",
    "default_branch": "main"
  },
  "commits": [{"id": "1a2b3c4", "added": [], "modified": ["apps/a/deploy.yaml"], "removed": []}]
}`

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

type staticSecret struct {
	value string
	err   error
}

func (s staticSecret) GitHubWebhookSecret(context.Context) (string, error) { return s.value, s.err }

type staticApps []v1alpha1.Application

func (a staticApps) ListApplications(context.Context) ([]v1alpha1.Application, error) { return a, nil }

// recordingRefresher records refreshes as namespace/name.
type recordingRefresher struct {
	mu   sync.Mutex
	apps []string
}

func (r *recordingRefresher) Refresh(_ context.Context, namespace, name string, _ application.RefreshType) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.apps = append(r.apps, namespace+"/"+name)
	return nil
}

func testApp(name, repo, revision string) v1alpha1.Application {
	return v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			Source:  &v1alpha1.ApplicationSource{RepoURL: repo, TargetRevision: revision, Path: "apps/a"},
		},
	}
}

// webhookRequest describes one request in a table.
type webhookRequest struct {
	method    string
	event     string
	signature string // "" sends no header
	body      string
	form      bool
}

func (wr webhookRequest) build() *http.Request {
	method := wr.method
	if method == "" {
		method = http.MethodPost
	}
	body := wr.body
	ctype := "application/json"
	if wr.form {
		body, ctype = "payload="+url.QueryEscape(wr.body), "application/x-www-form-urlencoded"
	}
	r := httptest.NewRequest(method, "/api/webhook", strings.NewReader(body))
	r.Header.Set("Content-Type", ctype)
	if wr.event != "" {
		r.Header.Set("X-GitHub-Event", wr.event)
	}
	if wr.signature != "" {
		r.Header.Set("X-Hub-Signature-256", wr.signature)
	}
	return r
}

func TestWebhookRequests(t *testing.T) {
	apps := staticApps{testApp("seed-main", "https://github.com/acme/seed.git", "main")}
	formBody := "payload=" + url.QueryEscape(pushPayload)
	tests := map[string]struct {
		secrets     SecretSource
		maxBytes    int64
		req         webhookRequest
		wantStatus  int
		wantBody    string
		wantRefresh []string
	}{
		"no secret accepts an unsigned push": {
			req:        webhookRequest{event: "push", body: pushPayload},
			wantStatus: 200, wantBody: "refreshed 1 application(s)", wantRefresh: []string{"argocd/seed-main"},
		},
		"empty secret accepts an unsigned push": {
			secrets: staticSecret{}, req: webhookRequest{event: "push", body: pushPayload},
			wantStatus: 200, wantBody: "refreshed 1", wantRefresh: []string{"argocd/seed-main"},
		},
		"valid signature": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "push", body: pushPayload, signature: sign(testSecret, pushPayload)},
			wantStatus: 200, wantBody: "refreshed 1", wantRefresh: []string{"argocd/seed-main"},
		},
		"valid signature of a form-encoded push": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "push", body: pushPayload, form: true, signature: sign(testSecret, formBody)},
			wantStatus: 200, wantBody: "refreshed 1", wantRefresh: []string{"argocd/seed-main"},
		},
		"signature with another secret": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "push", body: pushPayload, signature: sign("guess", pushPayload)},
			wantStatus: 400, wantBody: "does not match",
		},
		"signature of another body": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "push", body: pushPayload, signature: sign(testSecret, pushPayload+" ")},
			wantStatus: 400, wantBody: "does not match",
		},
		"missing signature with a secret set": {
			secrets: staticSecret{value: testSecret}, req: webhookRequest{event: "push", body: pushPayload},
			wantStatus: 400, wantBody: "missing X-Hub-Signature-256",
		},
		"malformed signature": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "push", body: pushPayload, signature: "sha1=abc"},
			wantStatus: 400, wantBody: "malformed X-Hub-Signature-256",
		},
		"unreadable secret fails closed": {
			secrets: staticSecret{err: errors.New("forbidden")}, req: webhookRequest{event: "push", body: pushPayload},
			wantStatus: 503, wantBody: "cannot read the webhook secret",
		},
		"ping": {
			secrets:    staticSecret{value: testSecret},
			req:        webhookRequest{event: "ping", body: `{"zen":"Keep it logically awesome."}`, signature: sign(testSecret, `{"zen":"Keep it logically awesome."}`)},
			wantStatus: 200, wantBody: "pong",
		},
		"other events are ignored": {
			req:        webhookRequest{event: "issues", body: pushPayload},
			wantStatus: 200, wantBody: `event "issues" ignored`,
		},
		"unsigned other events are rejected when a secret is set": {
			secrets: staticSecret{value: testSecret}, req: webhookRequest{event: "issues", body: "{}"},
			wantStatus: 400, wantBody: "missing X-Hub-Signature-256",
		},
		"body over the cap": {
			maxBytes: 64, req: webhookRequest{event: "push", body: pushPayload},
			wantStatus: 413, wantBody: "payload larger than 64 bytes",
		},
		"body at the cap": {
			maxBytes: int64(len(pushPayload)), req: webhookRequest{event: "push", body: pushPayload},
			wantStatus: 200, wantBody: "refreshed 1", wantRefresh: []string{"argocd/seed-main"},
		},
		"not a GitHub event": {
			req:        webhookRequest{body: pushPayload},
			wantStatus: 400, wantBody: "missing X-GitHub-Event",
		},
		"GET": {
			req:        webhookRequest{method: http.MethodGet, event: "push"},
			wantStatus: 405, wantBody: "POST only",
		},
		"invalid JSON": {
			req:        webhookRequest{event: "push", body: `{"ref": `},
			wantStatus: 400, wantBody: "invalid push payload",
		},
		"push without a repository": {
			req:        webhookRequest{event: "push", body: `{"ref": "refs/heads/main"}`},
			wantStatus: 400, wantBody: "repository.html_url are required",
		},
		"push of another branch refreshes nothing": {
			req:        webhookRequest{event: "push", body: strings.Replace(pushPayload, "refs/heads/main", "refs/heads/dev", 1)},
			wantStatus: 200, wantBody: "refreshed 0 application(s)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ref := &recordingRefresher{}
			h := NewWebhook(WebhookOptions{Apps: apps, Refresher: ref, Secrets: tc.secrets, MaxBodyBytes: tc.maxBytes})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, tc.req.build())
			if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("got %d %q, want %d containing %q", rec.Code, rec.Body.String(), tc.wantStatus, tc.wantBody)
			}
			if diff := cmp.Diff(tc.wantRefresh, ref.apps); diff != "" {
				t.Errorf("refreshed apps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebhookMatchesApps(t *testing.T) {
	withPaths := func(app v1alpha1.Application, paths string) v1alpha1.Application {
		app.Annotations = map[string]string{ManifestGeneratePathsAnnotation: paths}
		return app
	}
	multi := testApp("multi-source", "", "")
	multi.Spec.Source = nil
	multi.Spec.Sources = v1alpha1.ApplicationSources{
		{RepoURL: "https://github.com/acme/values.git", TargetRevision: "main"},
		{RepoURL: "https://github.com/acme/seed", TargetRevision: "main", Path: "apps/b"},
	}
	apps := staticApps{
		testApp("branch", "https://github.com/acme/seed.git", "main"),
		testApp("head-scp", "git@github.com:Acme/Seed.git", "HEAD"),
		testApp("empty-revision", "https://github.com/acme/seed/", ""),
		testApp("full-ref", "ssh://git@github.com/acme/seed", "refs/heads/main"),
		testApp("other-branch", "https://github.com/acme/seed.git", "dev"),
		testApp("other-repo", "https://github.com/acme/seed-two.git", "main"),
		withPaths(testApp("paths-hit", "https://github.com/acme/seed.git", "main"), "."),
		withPaths(testApp("paths-miss", "https://github.com/acme/seed.git", "main"), "../b"),
		multi,
	}
	ref := &recordingRefresher{}
	h := NewWebhook(WebhookOptions{Apps: apps, Refresher: ref})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, webhookRequest{event: "push", body: pushPayload}.build())
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := []string{"argocd/branch", "argocd/empty-revision", "argocd/full-ref", "argocd/head-scp", "argocd/multi-source", "argocd/paths-hit"}
	slices.Sort(ref.apps)
	if diff := cmp.Diff(want, ref.apps); diff != "" {
		t.Errorf("refreshed apps (-want +got):\n%s", diff)
	}
}
