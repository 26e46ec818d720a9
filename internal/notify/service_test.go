package notify

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/notify/notifytest"
)

// newTestService builds a service from its argocd-notifications-cm keys.
func newTestService(t *testing.T, data map[string]string, secret map[string][]byte, name string, certs map[string]string) (*Config, Service) {
	t.Helper()
	cfg := ParseConfig(data, secret)
	if len(cfg.Errors) > 0 {
		t.Fatal(cfg.Errors)
	}
	svc, err := NewService(cfg.Services[name], serviceEnv{certs: certs, threads: newSlackThreads()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, svc
}

// sendTemplate renders the template t of cfg for the app and sends it.
func sendTemplate(t *testing.T, cfg *Config, svc Service, dest Destination, templates ...string) error {
	t.Helper()
	n, err := cfg.Render(loadApp(t, "apps/deployed.yaml"), Env{}, Pending{Templates: templates, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Send(context.Background(), n, dest)
}

func TestWebhookService(t *testing.T) {
	rcv := notifytest.NewReceiver(t)
	cfg, svc := newTestService(t, map[string]string{
		"service.webhook.jenkins": "url: " + rcv.URL + "/job/deploy\nheaders:\n- {name: X-Token, value: $token}\nbasicAuth: {username: bot, password: $password}",
		"template.build":          "webhook:\n  jenkins:\n    method: POST\n    path: '/buildWithParameters?app={{.app.metadata.name}}'\n    body: 'revision={{.app.status.sync.revision}}'",
		"template.plain":          "message: '{{.app.metadata.name}} is {{.app.status.health.status}}'",
	}, map[string][]byte{"token": []byte("t0k3n"), "password": []byte("pa55")}, "jenkins", nil)
	dest := Destination{Service: "jenkins"}
	if err := sendTemplate(t, cfg, svc, dest, "build"); err != nil {
		t.Fatal(err)
	}
	if err := sendTemplate(t, cfg, svc, dest, "plain"); err != nil {
		t.Fatal(err)
	}
	reqs := rcv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	user, pass, _ := (&http.Request{Header: reqs[0].Header}).BasicAuth()
	got := []string{reqs[0].Method, reqs[0].Path, reqs[0].Query.Get("app"), string(reqs[0].Body), reqs[0].Header.Get("X-Token"), user, pass,
		reqs[1].Method, reqs[1].Path, string(reqs[1].Body)}
	want := []string{"POST", "/job/deploy/buildWithParameters", "app-a", "revision=4f2e1c9a7b", "t0k3n", "bot", "pa55",
		"GET", "/job/deploy", "app-a is Healthy"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	rcv.FailNext(http.StatusBadRequest)
	err := sendTemplate(t, cfg, svc, dest, "plain")
	var h *HTTPError
	if !errors.As(err, &h) || h.Status != http.StatusBadRequest || retryable(err) {
		t.Errorf("a 400: %v, want a permanent *HTTPError 400", err)
	}
	if strings.Contains(err.Error(), "t0k3n") || strings.Contains(err.Error(), "/job/deploy") {
		t.Errorf("error %q quotes the URL or a credential", err)
	}
}

func TestSlackService(t *testing.T) {
	rcv := notifytest.NewReceiver(t)
	cfg, svc := newTestService(t, map[string]string{
		"service.slack": "token: $slack-token\napiURL: " + rcv.URL + "/api/\nusername: wavecd\nicon: ':robot_face:'",
		"template.t": `message: '{{.app.metadata.name}} deployed'
slack:
  attachments: '[{"title": "{{.app.metadata.name}}", "color": "#18be52"}]'
  groupingKey: '{{.app.status.sync.revision}}'
  deliveryPolicy: PostAndUpdate`,
	}, map[string][]byte{"slack-token": []byte("xoxb-test")}, "slack", nil)
	dest := Destination{Service: "slack", Recipient: "deployments"}
	for range 2 {
		if err := sendTemplate(t, cfg, svc, dest, "t"); err != nil {
			t.Fatal(err)
		}
	}
	reqs := rcv.Requests()
	var paths []string
	for _, q := range reqs {
		paths = append(paths, q.Path)
		if q.Header.Get("Authorization") != "Bearer xoxb-test" {
			t.Errorf("%s: Authorization %q", q.Path, q.Header.Get("Authorization"))
		}
	}
	// The first message starts the thread; the second replies to it and
	// updates it (PostAndUpdate).
	if diff := cmp.Diff([]string{"/api/chat.postMessage", "/api/chat.postMessage", "/api/chat.update"}, paths); diff != "" {
		t.Fatalf("calls (-want +got):\n%s", diff)
	}
	first := reqs[0].Form
	if first.Get("channel") != "deployments" || first.Get("text") != "app-a deployed" || first.Get("username") != "wavecd" ||
		first.Get("icon_emoji") != ":robot_face:" || first.Get("thread_ts") != "" {
		t.Errorf("first post: %v", first)
	}
	var att []map[string]any
	if err := json.Unmarshal([]byte(first.Get("attachments")), &att); err != nil || att[0]["title"] != "app-a" {
		t.Errorf("attachments %q: %v", first.Get("attachments"), err)
	}
	if reqs[1].Form.Get("thread_ts") == "" || reqs[2].Form.Get("ts") != reqs[1].Form.Get("thread_ts") || reqs[2].Form.Get("channel") != "CDEPLOYMENTS" {
		t.Errorf("reply %v and update %v do not use the thread", reqs[1].Form, reqs[2].Form)
	}
}

func TestTeamsService(t *testing.T) {
	rcv := notifytest.NewReceiver(t)
	cfg, svc := newTestService(t, map[string]string{
		"service.teams": "recipientUrls:\n  ops: $teams-url",
		"template.t":    "message: plain\nteams:\n  title: '{{.app.metadata.name}}'\n  facts: '[{\"name\": \"Revision\", \"value\": \"{{.app.status.sync.revision}}\"}]'\n  themeColor: '#000080'",
	}, map[string][]byte{"teams-url": []byte(rcv.URL + "/teams/webhookb2/secret")}, "teams", nil)
	if err := sendTemplate(t, cfg, svc, Destination{Service: "teams", Recipient: "ops"}, "t"); err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	if err := json.Unmarshal(rcv.Requests()[0].Body, &card); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"@type": "MessageCard", "@context": "https://schema.org/extensions", "title": "app-a", "summary": "", "text": "plain", "themeColor": "#000080",
		"sections": []any{map[string]any{"facts": []any{map[string]any{"name": "Revision", "value": "4f2e1c9a7b"}}}},
	}
	if diff := cmp.Diff(want, card); diff != "" {
		t.Errorf("card (-want +got):\n%s", diff)
	}
	if err := sendTemplate(t, cfg, svc, Destination{Service: "teams", Recipient: "nobody"}, "t"); err == nil || !strings.Contains(err.Error(), `recipient "nobody"`) {
		t.Errorf("unknown recipient: %v", err)
	}
}

func TestGitHubService(t *testing.T) {
	rcv := notifytest.NewReceiver(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	cfg, svc := newTestService(t, map[string]string{
		"service.github": "appID: 12345\ninstallationID: '678'\nprivateKey: $github-privateKey\nenterpriseBaseURL: " + rcv.URL + "/api/v3",
		"template.t": `message: Application {{.app.metadata.name}} is now running new version of deployments manifests.
github:
  repoURLPath: "{{.app.spec.source.repoURL}}"
  revisionPath: "{{.app.status.operationState.syncResult.revision}}"
  status:
    state: success
    label: "continuous-delivery/{{.app.metadata.name}}"
    targetURL: "https://cd.example.com/applications/{{.app.metadata.name}}"
  deployment:
    state: success
    environment: production
    environmentURL: "https://app.example.com"
    logURL: "https://cd.example.com/applications/{{.app.metadata.name}}?operation=true"
    requiredContexts: []`,
	}, map[string][]byte{"github-privateKey": keyPEM}, "github", nil)
	if err := sendTemplate(t, cfg, svc, Destination{Service: "github"}, "t"); err != nil {
		t.Fatal(err)
	}
	reqs := rcv.Requests()
	var calls []string
	for _, q := range reqs {
		calls = append(calls, q.Method+" "+q.Path)
	}
	want := []string{
		"POST /api/v3/app/installations/678/access_tokens",
		"POST /api/v3/repos/example/healthcheck-poc/statuses/4f2e1c9a7b",
		"GET /api/v3/repos/example/healthcheck-poc/deployments",
		"POST /api/v3/repos/example/healthcheck-poc/deployments",
		"POST /api/v3/repos/example/healthcheck-poc/deployments/7/statuses",
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Fatalf("calls (-want +got):\n%s", diff)
	}
	verifyAppJWT(t, reqs[0].Header.Get("Authorization"), &key.PublicKey, "12345")
	for _, q := range reqs[1:] {
		if q.Header.Get("Authorization") != "token ghs_installation" {
			t.Errorf("%s %s: Authorization %q, want the installation token", q.Method, q.Path, q.Header.Get("Authorization"))
		}
	}
	var status, deployment map[string]any
	_ = json.Unmarshal(reqs[1].Body, &status)
	_ = json.Unmarshal(reqs[3].Body, &deployment)
	if status["state"] != "success" || status["context"] != "continuous-delivery/app-a" || !strings.HasPrefix(status["description"].(string), "Application app-a is now") {
		t.Errorf("status %v", status)
	}
	if deployment["ref"] != "4f2e1c9a7b" || deployment["environment"] != "production" || deployment["auto_merge"] != true {
		t.Errorf("deployment %v", deployment)
	}
	if got := reqs[2].Query.Get("ref") + " " + reqs[2].Query.Get("environment"); got != "4f2e1c9a7b production" {
		t.Errorf("deployments listed by %q", got)
	}
}

// verifyAppJWT checks the app's token: RS256 over header.claims, issued
// by the app.
func verifyAppJWT(t *testing.T, header string, pub *rsa.PublicKey, appID string) {
	t.Helper()
	parts := strings.Split(strings.TrimPrefix(header, "Bearer "), ".")
	if len(parts) != 3 {
		t.Fatalf("Authorization %q is not a bearer JWT", header)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("JWT signature: %v", err)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	_ = json.Unmarshal(claims, &c)
	if c["iss"] != appID || c["exp"].(float64)-float64(time.Now().Unix()) > 600 {
		t.Errorf("claims %v", c)
	}
}

func TestOpsgenieService(t *testing.T) {
	rcv := notifytest.NewReceiver(t)
	cfg, svc := newTestService(t, map[string]string{
		"service.opsgenie": "apiUrl: " + rcv.URL + "\napiKeys:\n  platform: $opsgenie-key",
		"template.t":       "message: '{{.app.metadata.name}} failed'\nopsgenie:\n  description: 'sync of {{.app.metadata.name}}'\n  priority: P1\n  tags: [wavecd]",
	}, map[string][]byte{"opsgenie-key": []byte("genie-1")}, "opsgenie", nil)
	if err := sendTemplate(t, cfg, svc, Destination{Service: "opsgenie", Recipient: "platform"}, "t"); err != nil {
		t.Fatal(err)
	}
	q := rcv.Requests()[0]
	var alert map[string]any
	_ = json.Unmarshal(q.Body, &alert)
	if q.Path != "/v2/alerts" || q.Header.Get("Authorization") != "GenieKey genie-1" || alert["message"] != "app-a failed" ||
		alert["description"] != "sync of app-a" || alert["priority"] != "P1" {
		t.Errorf("alert %s %v %v", q.Path, q.Header, alert)
	}
}

// TestEmailService mails through an SMTP server that offers STARTTLS and
// takes credentials only once encrypted; its certificate is trusted
// through argocd-tls-certs-cm.
func TestEmailService(t *testing.T) {
	srv := notifytest.NewSMTPServer(t)
	cfg, svc := newTestService(t, map[string]string{
		"service.email.smtp": "{ username: $email-username, password: $email-password, host: 127.0.0.1, port: " + strconv.Itoa(srv.Port) + ", from: $email-username }",
		"template.t":         "email:\n  subject: 'Application {{.app.metadata.name}} deployed'\nmessage: 'Revision {{.app.status.sync.revision}} is live.'",
	}, map[string][]byte{"email-username": []byte("cd@example.com"), "email-password": []byte("hunter2")}, "smtp", map[string]string{"127.0.0.1": srv.CertPEM})
	if err := sendTemplate(t, cfg, svc, Destination{Service: "smtp", Recipient: "ops@example.com, dev@example.com"}, "t"); err != nil {
		t.Fatal(err)
	}
	m := srv.WaitForMails(t, 1, 5*time.Second)[0]
	if !m.TLS || m.User != "cd@example.com" || m.Password != "hunter2" || m.From != "cd@example.com" {
		t.Errorf("session: TLS %v, user %q, from %q", m.TLS, m.User, m.From)
	}
	if diff := cmp.Diff([]string{"ops@example.com", "dev@example.com"}, m.To); diff != "" {
		t.Errorf("recipients (-want +got):\n%s", diff)
	}
	for _, want := range []string{"Subject: Application app-a deployed\r\n", "To: ops@example.com, dev@example.com\r\n", "\r\n\r\nRevision 4f2e1c9a7b is live."} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Data)
		}
	}
	// Without the certificate, the server's is not trusted.
	_, untrusted := newTestService(t, map[string]string{
		"service.email": "{ host: 127.0.0.1, port: " + strconv.Itoa(srv.Port) + ", from: cd@example.com }",
		"template.t":    "message: x",
	}, nil, "email", nil)
	if err := sendTemplate(t, cfg, untrusted, Destination{Service: "email", Recipient: "ops@example.com"}, "t"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}
