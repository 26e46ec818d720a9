package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ssoUser is a user of the test's OpenID provider.
type ssoUser struct {
	ID       string   `json:"id"`
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email"`
	Groups   []string `json:"groups"`
}

var (
	alice = ssoUser{ID: "u-alice", Username: "alice", Password: "alice-at-the-idp", Email: "alice@example.test", Groups: []string{"my-org:platform"}}
	bob   = ssoUser{ID: "u-bob", Username: "bob", Password: "bob-at-the-idp", Email: "bob@example.test", Groups: []string{"my-org:dev"}}
)

// idTokenLifetime is short, so that the CLI must refresh its token
// within the test.
const idTokenLifetime = 5 * time.Second

// TestCLISSO signs in with argocd login --sso: the CLI reads the provider
// from wavecd's settings and runs the authorization code flow with PKCE
// itself, with its callback on localhost; the test plays the browser at a
// real OpenID provider (zitadel/oidc's example provider, as a process of
// its own). RBAC follows the token's groups, and the CLI refreshes its
// expired ID token with the refresh token it got.
func TestCLISSO(t *testing.T) {
	m := wavecdTLS
	port := freePort(t)
	issuer := startIdP(t, port)
	configureSSO(t, issuer)

	config := filepath.Join(t.TempDir(), "config")
	out := ssoLogin(t, m, config, port, issuer, alice)
	if !strings.Contains(out, "'alice@example.test' logged in successfully") || !strings.Contains(out, "Context '"+m.addr()+"' updated") {
		t.Fatalf("argocd login --sso:\n%s", out)
	}
	token := authToken(t, config)
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			out, code := argocd(t, m, config, s.args...)
			if code != s.exit || s.want != "" && !regexp.MustCompile(s.want).MatchString(out) {
				t.Errorf("argocd %s: exit %d (want %d), output:\n%s\nwant it to match %q", strings.Join(s.args, " "), code, s.exit, out, s.want)
			}
		}
	}
	run([]step{
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: u-alice\nIssuer: ` + regexp.QuoteMeta(issuer) + `\nGroups: my-org:platform\n`},
		{args: []string{"account", "can-i", "create", "projects", "*"}, want: `^yes\n$`}, // role:admin through group my-org:platform
		{args: []string{"proj", "list"}, want: `(?m)^default `},
	})
	time.Sleep(idTokenLifetime + time.Second)
	run([]step{
		{args: []string{"account", "get-user-info"}, want: `Logged In: true\nUsername: u-alice\n`},
	})
	if refreshed := authToken(t, config); refreshed == token || refreshed == "" {
		t.Errorf("the CLI did not refresh its expired ID token")
	}
	run([]step{
		{args: []string{"logout", m.addr()}, want: `Logged out from '`},
		{args: []string{"account", "get-user-info"}, want: `Logged In: false`},
	})

	config = filepath.Join(t.TempDir(), "config")
	if out := ssoLogin(t, m, config, port, issuer, bob); !strings.Contains(out, "'bob@example.test' logged in successfully") {
		t.Fatalf("argocd login --sso as bob:\n%s", out)
	}
	run([]step{
		{args: []string{"account", "get-user-info"}, want: `Username: u-bob\nIssuer: .*\nGroups: my-org:dev\n`},
		{args: []string{"account", "can-i", "create", "projects", "*"}, want: `^no\n$`},
		{args: []string{"proj", "create", "bobs", "--dest", "https://kubernetes.default.svc,bobs"}, exit: 20, want: `PermissionDenied`},
	})
}

// startIdP starts the OpenID provider with alice and bob, wavecd's client
// and the CLI's (a native client whose callback is localhost:port); it
// returns the issuer URL.
func startIdP(t *testing.T, port int) string {
	t.Helper()
	bin, err := binary("WAVECD_TEST_IDP", "wavecd-test-idp")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config, _ := json.Marshal(map[string]any{
		"users": []ssoUser{alice, bob},
		"clients": []map[string]any{
			{"id": "wavecd", "secret": "wavecd-client-secret", "redirectURIs": []string{"https://" + env.tlsAddr + "/auth/callback"}},
			{"id": "argocd-cli", "native": true, "redirectURIs": []string{fmt.Sprintf("http://localhost:%d/auth/callback", port)}},
		},
		"idTokenLifetime": idTokenLifetime.String(),
	})
	if err := os.WriteFile(filepath.Join(dir, "idp.json"), config, 0o600); err != nil {
		t.Fatal(err)
	}
	stop, err := startProcess(filepath.Join(dir, "idp.log"), bin, "serve", "--config", filepath.Join(dir, "idp.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	var issuer string
	err = waitFor(30*time.Second, "the OpenID provider", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "idp.log"))
		if m := regexp.MustCompile(`(?m)^issuer (\S+)$`).FindSubmatch(b); m != nil {
			issuer = string(m[1])
		}
		return issuer != ""
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(filepath.Join(dir, "idp.log")))
	}
	return issuer
}

// configureSSO writes the SSO settings as Argo CD users write them:
// oidc.config in argocd-cm (the client secret a reference into
// argocd-secret, the CLI's own client), and groups-based RBAC in
// argocd-rbac-cm. The settings are taken back at the end.
func configureSSO(t *testing.T, issuer string) {
	t.Helper()
	kube, ctx := env.kube, context.Background()
	sec, err := kube.CoreV1().Secrets("argocd").Get(ctx, "argocd-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["oidc.wavecd.clientSecret"] = []byte("wavecd-client-secret")
	if _, err := kube.CoreV1().Secrets("argocd").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settings := map[string]map[string]string{
		"argocd-cm": {"url": "https://" + env.tlsAddr, "oidc.config": "name: Example IdP\nissuer: " + issuer +
			"\nclientID: wavecd\nclientSecret: $oidc.wavecd.clientSecret\ncliClientID: argocd-cli\nrequestedScopes: [openid, profile, email, groups]\n"},
		"argocd-rbac-cm": {"policy.csv": "g, my-org:platform, role:admin\n", "scopes": "[groups]"},
	}
	for name, data := range settings {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"}, Data: data}
		if _, err := kube.CoreV1().ConfigMaps("argocd").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ConfigMap %s: %v", name, err)
		}
		t.Cleanup(func() {
			if err := kube.CoreV1().ConfigMaps("argocd").Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete ConfigMap %s: %v", name, err)
			}
		})
	}
}

// ssoLogin runs argocd login --sso without a browser: it reads the
// authorization URL the CLI prints, signs in at the provider as user (the
// test IdP's sign-in command plays the browser) and opens the CLI's
// callback with the code, as the browser would; it returns the CLI's
// output.
func ssoLogin(t *testing.T, m target, config string, port int, issuer string, user ssoUser) string {
	t.Helper()
	args := append(append([]string{"--config", config}, m.flags...),
		"login", m.addr(), "--sso", "--sso-port", fmt.Sprint(port), "--sso-launch-browser=false")
	cmd := exec.Command(env.argocd, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := bufio.NewScanner(io.TeeReader(stdout, &out))
	var authURL string
	for lines.Scan() {
		if _, u, ok := strings.Cut(lines.Text(), "copy-and-paste the following URL into your preferred browser: "); ok {
			authURL = u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, io.TeeReader(stdout, &out)); done <- cmd.Wait() }()
	if authURL == "" {
		<-done
		t.Fatalf("argocd login --sso printed no URL to open:\n%s", out.String())
	}
	bin, _ := binary("WAVECD_TEST_IDP", "wavecd-test-idp")
	callback, err := exec.Command(bin, "sign-in", "--issuer", issuer, "--auth-url", authURL, "--username", user.Username, "--password", user.Password).Output()
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("sign in at the provider as %s: %v", user.Username, err)
	}
	if err := openCallback(strings.TrimSpace(string(callback))); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("open the CLI's callback: %v\n%s", err, out.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("argocd login --sso: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("argocd login --sso did not end:\n%s", out.String())
	}
	return out.String()
}

// lockedBuffer is a buffer that two goroutines write.
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

// openCallback opens the CLI's callback URL, waiting for the CLI to
// listen (it starts its server a second after it prints the URL).
func openCallback(u string) error {
	var lastErr error
	for range 50 {
		resp, err := http.Get(u) //nolint:gosec,noctx // the CLI's callback on localhost
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Authentication successful!") {
				return fmt.Errorf("%s: %s %s", u, resp.Status, body)
			}
			return nil
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	return lastErr
}

// authToken is the token the CLI keeps in its config file.
func authToken(t *testing.T, config string) string {
	t.Helper()
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)\bauth-token: (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no auth-token in the CLI's config %s", config)
	}
	return string(m[1])
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
