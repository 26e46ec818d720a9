package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/server"
	"github.com/wavecd/wavecd/internal/testenv"
)

var (
	crdsOnce sync.Once
	crdsErr  error
)

// logs captures everything the package's tests log through slog, so a
// test can check that no secret reaches a log.
var logs = &lockedBuffer{}

var logsOnce sync.Once

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Users of the API tests besides admin: alice may get every app (role
// viewer), bot is an apiKey account without any role.
const (
	alicePassword = "alice-Passw0rd-xyz"
	rbacPolicy    = `p, role:viewer, applications, get, */*, allow
g, alice, role:viewer
`
)

// apiHarness is an API server against the test cluster, in a fresh
// namespace, with admin (generated password) and alice.
type apiHarness struct {
	t        testing.TB
	ns       string
	kube     client.WithWatch
	base     string
	insecure bool
	// adminPassword is the generated initial password.
	adminPassword string
	// bodies are every response body the harness's requests read.
	bodies *lockedBuffer
}

type harnessOptions struct {
	tls        bool
	sessionTTL time.Duration
	differ     server.Differ
	limiter    *auth.Limiter
	// namespace reuses a namespace instead of creating one.
	namespace string
	// appNamespaces are more namespaces whose apps are served.
	appNamespaces []string
}

func newAPIHarness(t testing.TB, o harnessOptions) *apiHarness {
	t.Helper()
	logsOnce.Do(func() {
		slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	})
	env := testenv.Get(t)
	crdsOnce.Do(func() {
		ext, err := apiextensions.NewForConfig(env.Config)
		if err == nil {
			_, err = install.InstallCRDs(context.Background(), ext, install.CRDOptions{})
		}
		crdsErr = err
	})
	if crdsErr != nil {
		t.Fatalf("install CRDs: %v", crdsErr)
	}
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := o.namespace
	if ns == "" {
		ns = env.Namespace(t)
	}
	h := &apiHarness{t: t, ns: ns, kube: kube, insecure: !o.tls, bodies: &lockedBuffer{}}
	h.settings()
	srv, err := server.NewAPIServer(t.Context(), env.Config, server.APIServerOptions{
		Namespace: ns, ApplicationNamespaces: o.appNamespaces, Insecure: !o.tls, SessionTTL: o.sessionTTL, Differ: o.differ, Limiter: o.limiter,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.adminPassword = h.secretValue(auth.InitialAdminSecretName, "password")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	scheme2 := "http"
	if o.tls {
		scheme2 = "https"
	}
	h.base = scheme2 + "://" + ln.Addr().String()
	return h
}

// settings writes argocd-cm (alice, bot), alice's password and
// argocd-rbac-cm before the server starts; the server bootstraps the rest
// of argocd-secret.
func (h *apiHarness) settings() {
	h.t.Helper()
	hash, err := auth.HashPassword(alicePassword)
	if err != nil {
		h.t.Fatal(err)
	}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "argocd-cm"},
			Data: map[string]string{"accounts.alice": "login", "accounts.bot": "apiKey"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "argocd-rbac-cm"},
			Data: map[string]string{"policy.csv": rbacPolicy}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "argocd-secret"},
			Data: map[string][]byte{"accounts.alice.password": []byte(hash)}},
	}
	for _, o := range objs {
		if err := h.kube.Create(h.t.Context(), o); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *apiHarness) secretValue(name, key string) string {
	h.t.Helper()
	var sec corev1.Secret
	if err := h.kube.Get(h.t.Context(), client.ObjectKey{Namespace: h.ns, Name: name}, &sec); err != nil {
		h.t.Fatalf("read secret %s: %v", name, err)
	}
	return string(sec.Data[key])
}

// httpClient trusts the server's self-signed certificate and keeps cookies.
func (h *apiHarness) httpClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test server's self-signed certificate
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// response is a status, headers and body.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request with an optional bearer token and JSON body.
func (h *apiHarness) do(method, path, token string, body any) response {
	h.t.Helper()
	return h.doWith(h.httpClient(), method, path, token, body)
}

func (h *apiHarness) doWith(c *http.Client, method, path, token string, body any) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	_, _ = h.bodies.Write(b)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// login returns a session token of user.
func (h *apiHarness) login(user, password string) string {
	h.t.Helper()
	r := h.do("POST", "/api/v1/session", "", map[string]string{"username": user, "password": password})
	if r.status != http.StatusOK {
		h.t.Fatalf("login %s: %d %s", user, r.status, r.body)
	}
	var out struct{ Token string }
	h.decode(r, &out)
	if out.Token == "" {
		h.t.Fatalf("login %s: no token in %s", user, r.body)
	}
	return out.Token
}

// addPolicy appends lines to argocd-rbac-cm's policy.csv; the API reads
// it afresh on each request.
func (h *apiHarness) addPolicy(lines string) {
	h.t.Helper()
	var rbac corev1.ConfigMap
	if err := h.kube.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "argocd-rbac-cm"}, &rbac); err != nil {
		h.t.Fatal(err)
	}
	rbac.Data["policy.csv"] += lines
	if err := h.kube.Update(context.Background(), &rbac); err != nil {
		h.t.Fatal(err)
	}
}

func (h *apiHarness) admin() string { return h.login("admin", h.adminPassword) }

func (h *apiHarness) decode(r response, v any) {
	h.t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		h.t.Fatalf("decode %q: %v", r.body, err)
	}
}

// wantError checks an error response: status and Argo CD's JSON shape.
func (h *apiHarness) wantError(what string, r response, status, code int) {
	h.t.Helper()
	if r.status != status {
		h.t.Errorf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
		return
	}
	var e struct {
		Error   string `json:"error"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	h.decode(r, &e)
	if e.Code != code || e.Message == "" || e.Error == "" {
		h.t.Errorf("%s: error body %s, want code %d with error and message", what, r.body, code)
	}
}

// apply creates objects from YAML with NAMESPACE replaced by the
// harness's namespace.
func (h *apiHarness) apply(manifests string) {
	h.t.Helper()
	for _, doc := range strings.Split(strings.ReplaceAll(manifests, "NAMESPACE", h.ns), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := decodeYAML(h.t, doc)
		if u.GetNamespace() == "" && u.GetKind() != "Namespace" {
			u.SetNamespace(h.ns)
		}
		if err := h.kube.Create(h.t.Context(), u); err != nil {
			h.t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}
