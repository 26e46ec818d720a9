package scmtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
)

// GiteaEnv names the Gitea executable the tests run (make gitea builds
// bin/gitea from the Go module proxy, and make test sets it).
const GiteaEnv = "WAVECD_GITEA"

// giteaStart bounds a Gitea server's start.
const giteaStart = 90 * time.Second

// Gitea is a real Gitea server on 127.0.0.1, with an admin account.
type Gitea struct {
	// URL is the server's root URL.
	URL string
	// Token is an access token of the admin account, with every scope.
	Token string
	// Admin is the admin account's name.
	Admin string
	// Client speaks Gitea's API as the admin.
	Client *gitea.Client
	// CA trusts the server's certificate when it speaks HTTPS (nil
	// otherwise).
	CA *x509.CertPool
}

// ServeGitea starts a Gitea server (the executable GiteaEnv names, with
// the templates and options beside it in gitea-static/) with an SQLite
// database in a temporary folder, and stops it, by its process id, when
// the test ends. A missing executable fails the test.
func ServeGitea(t testing.TB) *Gitea {
	t.Helper()
	return serveGitea(t, false)
}

// ServeGiteaTLS is ServeGitea speaking HTTPS with a certificate of its
// own, which Gitea.CA trusts.
func ServeGiteaTLS(t testing.TB) *Gitea {
	t.Helper()
	return serveGitea(t, true)
}

func serveGitea(t testing.TB, https bool) *Gitea {
	t.Helper()
	bin := os.Getenv(GiteaEnv)
	if bin == "" {
		t.Fatalf("%s is not set: make gitea builds bin/gitea, and make test sets it", GiteaEnv)
	}
	static := filepath.Join(filepath.Dir(bin), "gitea-static")
	for _, p := range []string{bin, static} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v (make gitea builds it)", GiteaEnv, err)
		}
	}
	dir := t.TempDir()
	port := freePort(t)
	g := &Gitea{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Admin: "wavecd"}
	protocol := "http"
	if https {
		protocol, g.URL = "https", "https"+strings.TrimPrefix(g.URL, "http")
		g.CA = writeCertificate(t, dir)
	}
	cfg := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(cfg, []byte(giteaConfig(t, dir, static, protocol, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", cfg)...)
		cmd.Env, cmd.Dir = giteaEnviron(dir), dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gitea %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("migrate")
	run("admin", "user", "create", "--username", g.Admin, "--password", "wavecd-test-password",
		"--email", "wavecd@example.com", "--admin", "--must-change-password=false")
	g.Token = strings.TrimSpace(lastLine(run("admin", "user", "generate-access-token", "--username", g.Admin,
		"--token-name", "tests", "--scopes", "all", "--raw")))
	startGitea(t, bin, cfg, dir)
	hc := g.HTTPClient()
	waitGitea(t, hc, g.URL)
	c, err := gitea.NewClient(g.URL, gitea.SetToken(g.Token), gitea.SetHTTPClient(hc))
	if err != nil {
		t.Fatalf("gitea client: %v", err)
	}
	g.Client = c
	return g
}

// startGitea runs gitea web until the test ends.
func startGitea(t testing.TB, bin, cfg, dir string) {
	t.Helper()
	var log bytes.Buffer
	cmd := exec.Command(bin, "web", "--config", cfg)
	cmd.Env, cmd.Dir = giteaEnviron(dir), dir
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gitea: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("gitea's log:\n%s", tail(log.String(), 4000))
		}
	})
}

// HTTPClient is a client of the server: one that trusts its certificate
// when it speaks HTTPS.
func (g *Gitea) HTTPClient() *http.Client {
	if g.CA == nil {
		return &http.Client{}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: g.CA, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// waitGitea waits until the server answers its version.
func waitGitea(t testing.TB, hc *http.Client, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), giteaStart)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/version", nil)
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gitea did not answer at %s within %s: %v", url, giteaStart, errors.Join(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// giteaConfig is an app.ini for a server on 127.0.0.1:port that keeps
// everything in dir, reads its templates and options from static, and
// reaches nothing outside.
func giteaConfig(t testing.TB, dir, static, protocol string, port int) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`APP_NAME = wavecd tests
RUN_MODE = prod
RUN_USER = %[1]s
WORK_PATH = %[2]s

[server]
PROTOCOL = %[5]s
CERT_FILE = %[2]s/cert.pem
KEY_FILE = %[2]s/key.pem
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = %[5]s://127.0.0.1:%[3]d/
DOMAIN = 127.0.0.1
SSH_DOMAIN = 127.0.0.1
DISABLE_SSH = true
START_SSH_SERVER = false
SSH_USER = git
OFFLINE_MODE = true
LFS_START_SERVER = false
APP_DATA_PATH = %[2]s/data
STATIC_ROOT_PATH = %[4]s

[database]
DB_TYPE = sqlite3
PATH = %[2]s/data/gitea.db

[repository]
ROOT = %[2]s/repositories

[security]
INSTALL_LOCK = true
SECRET_KEY = wavecd-tests-secret-key
INTERNAL_TOKEN = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJuYmYiOjE3MDAwMDAwMDB9.wavecd-tests-internal-token

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[queue]
TYPE = channel

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[migrations]
ALLOW_LOCALNETWORKS = false

[log]
MODE = console
LEVEL = warn
`, u.Username, dir, port, static, protocol)
}

// giteaEnviron is the server's environment: its home in dir, and leave
// to run as root where the tests run as root.
func giteaEnviron(dir string) []string {
	return append(os.Environ(), "HOME="+dir, "GITEA_WORK_DIR="+dir, "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true")
}

// freePort is a TCP port free on 127.0.0.1 now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
