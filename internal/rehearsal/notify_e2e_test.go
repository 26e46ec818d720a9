package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/notify/notifytest"
	"github.com/wavecd/wavecd/internal/testenv"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// notificationSettings is a settings file in Argo CD's format: services
// pointing at the test's receivers, credentials in the Secret, and
// subscriptions for every app in the `subscriptions` key, so the
// example's manifests stay as they are. The catalog's triggers and
// templates come from `wavecd up`.
const notificationSettings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
  namespace: argocd
data:
  context: |
    argocdUrl: https://cd.example.com
  service.slack: |
    token: $slack-token
    apiURL: RECEIVER/api/
  service.webhook.pager: |
    url: RECEIVER/hooks/$pager-token
  service.teams: |
    recipientUrls:
      platform: $teams-url
  service.email: |
    host: 127.0.0.1
    port: SMTP_PORT
    from: cd@example.com
    username: $email-username
    password: $email-password
  subscriptions: |
    - recipients: [slack:deployments]
      triggers: [on-deployed]
    - recipients: [pager, email:oncall@example.com]
      triggers: [on-sync-failed]
    - recipients: [teams:platform, email:platform@example.com]
      triggers: [on-bootstrap-complete]
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-notifications-secret
  namespace: argocd
stringData:
  slack-token: xoxb-rehearsal
  pager-token: pager-s3cret
  teams-url: RECEIVER/teams/webhookb2/platform
  email-username: cd@example.com
  email-password: hunter2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-tls-certs-cm
  namespace: argocd
data:
  127.0.0.1: |
CERT`

// migrateHook is a PreSync hook of app-b, written as users write them
// (generateName, BeforeHookCreation); EXIT is its container's exit code.
const migrateHook = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: app-b-migrate-
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        localcluster.wavecd.io/exit-code: "EXIT"
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: example.com/app-b-migrate:2
`

var deployedMessage = regexp.MustCompile(`Application (\S+) now runs revision (\S+) of its manifests`)

// TestUpNotifiesTheHealthCheckExample rehearses the health-check demo
// three times on one cluster with notifications configured as in Argo CD,
// against receivers on 127.0.0.1: the first revision deploys every app
// (one on-deployed each, with the revision, and one on-bootstrap-complete
// for the root with its wall time and slowest wave); the second adds a
// PreSync hook that fails (one on-sync-failed for app-b, however often the
// sync is retried, and no on-deployed); the third fixes it (one on-deployed
// for app-b only, and a second bootstrap-complete). Each run restarts the
// controller: nothing is sent twice.
func TestUpNotifiesTheHealthCheckExample(t *testing.T) {
	e := newRehearsalEnv(t)
	e.repo = t.TempDir()
	if err := os.CopyFS(e.repo, os.DirFS(example)); err != nil {
		t.Fatal(err)
	}
	// app-b's team retries a failed sync once, a second later.
	e.edit(map[string]func(string) string{
		"apps/templates/app-b.yaml": func(s string) string {
			return strings.Replace(s, "    syncOptions:", "    retry: {limit: 1, backoff: {duration: 1s}}\n    syncOptions:", 1)
		},
	})
	rcv := notifytest.NewReceiver(t)
	smtp := notifytest.NewSMTPServer(t)
	settings := filepath.Join(t.TempDir(), "notifications.yaml")
	cert := "    " + strings.ReplaceAll(strings.TrimSpace(smtp.CertPEM), "\n", "\n    ") + "\n"
	folder.Write(t, filepath.Dir(settings), map[string]string{filepath.Base(settings): strings.NewReplacer(
		"RECEIVER", rcv.URL, "SMTP_PORT", fmt.Sprint(smtp.Port), "CERT", cert).Replace(notificationSettings)})

	// The first revision: every app deploys.
	out := &testenv.SyncBuffer{}
	u := e.up("", out)
	u.Settings, u.Fresh = settings, true
	e.run("first revision", u, out)
	rev1 := e.revision("app-b")
	waitDeployed(t, rcv, 3)
	bootstrap := rcv.WaitFor(t, 1, time.Minute, isPath("/teams/webhookb2/platform"))
	checkBootstrapCard(t, bootstrap[0].Body)

	// The second revision: app-b changes, and its new PreSync hook fails
	// (on the first try and on the retry).
	e.edit(map[string]func(string) string{
		"charts/app-b/templates/deployment.yaml": func(s string) string {
			return strings.Replace(s, "labels: {app: app-b}", `labels: {app: app-b, release: "2"}`, 1)
		},
		"charts/app-b/templates/migrate.yaml": func(string) string { return strings.Replace(migrateHook, "EXIT", "1", 1) },
	})
	ctx, cancel := context.WithCancel(t.Context())
	out = &testenv.SyncBuffer{}
	u = e.up("", out)
	u.Settings, u.ExitWhenSettled = settings, false
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx) }()
	second := out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("second revision (%d bytes):\n%s", len(second.String()), second.String())
			app := &v1alpha1.Application{}
			_ = e.client().Get(context.Background(), client.ObjectKey{Namespace: Namespace, Name: "app-b"}, app)
			b, _ := json.MarshalIndent(app.Status.OperationState, "", "  ")
			t.Logf("app-b: operation %v, state %s", app.Operation, b)
		}
		cancel()
	})
	go func() {
		// A rehearsal that ends on its own has failed: say why at once.
		if err := <-done; ctx.Err() == nil {
			t.Errorf("second revision: up ended: %v", err)
		}
		done <- nil
	}()
	failed := rcv.WaitFor(t, 1, 2*time.Minute, isPath("/hooks/pager-s3cret"))
	smtp.WaitForMails(t, 2, time.Minute)
	e.waitSyncFailedFinal("app-b")
	cancel()
	<-done //nolint:errcheck // up's end was checked in its goroutine
	t.Logf("second revision:\n%s", out.String())
	rev2 := e.revision("app-b")
	if body := string(failed[0].Body); !strings.Contains(body, "The sync of application app-b failed") ||
		!regexp.MustCompile(`\n- Job app-b/app-b-migrate-\S+: Job has reached the specified backoff limit\n`).MatchString(body) {
		t.Errorf("on-sync-failed to the webhook: %q, want app-b's failed sync and its hook", body)
	}

	// The third revision: the hook passes.
	e.edit(map[string]func(string) string{
		"charts/app-b/templates/migrate.yaml": func(string) string { return strings.Replace(migrateHook, "EXIT", "0", 1) },
	})
	out = &testenv.SyncBuffer{}
	u = e.up("", out)
	u.Settings = settings
	e.run("third revision", u, out)
	rev3 := e.revision("app-b")
	waitDeployed(t, rcv, 4)
	rcv.WaitFor(t, 2, time.Minute, isPath("/teams/webhookb2/platform"))

	// Nothing more arrives: the counts below are final.
	time.Sleep(3 * time.Second)
	if slices.Contains([]string{rev2, rev3}, rev1) || rev2 == rev3 {
		t.Fatalf("revisions %s, %s, %s are not three", rev1, rev2, rev3)
	}
	want := []string{"app-a " + rev1, "app-b " + rev1, "app-b " + rev3, "root " + rev1}
	slices.Sort(want) // as deployedApps sorts: the revisions' hashes decide the order
	if diff := cmp.Diff(want, deployedApps(rcv)); diff != "" {
		t.Errorf("on-deployed to Slack (-want +got):\n%s", diff)
	}
	if n := len(filter(rcv.Requests(), isPath("/hooks/pager-s3cret"))); n != 1 {
		t.Errorf("%d on-sync-failed to the webhook, want 1", n)
	}
	if n := len(filter(rcv.Requests(), isPath("/teams/webhookb2/platform"))); n != 2 {
		t.Errorf("%d on-bootstrap-complete to Teams, want 2 (first and third revision)", n)
	}
	subjects := map[string]int{}
	for _, m := range smtp.Mails() {
		subjects[mailSubject(m.Data)+" to "+strings.Join(m.To, ",")]++
		if !m.TLS || m.Password != "hunter2" {
			t.Errorf("mail %q: TLS %v, credentials %q", mailSubject(m.Data), m.TLS, m.Password)
		}
	}
	wantMails := map[string]int{
		"Bootstrap of root is complete. to platform@example.com":  2,
		"Sync of application app-b failed. to oncall@example.com": 1,
	}
	if diff := cmp.Diff(wantMails, subjects); diff != "" {
		t.Errorf("mails (-want +got):\n%s", diff)
	}
}

// edit changes files of the test's copy of the example.
func (e *rehearsalEnv) edit(changes map[string]func(string) string) {
	e.t.Helper()
	for name, change := range changes {
		p := filepath.Join(e.repo, filepath.FromSlash(name))
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(change(string(b))), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// revision is the revision an app compares with.
func (e *rehearsalEnv) revision(name string) string {
	e.t.Helper()
	app := &v1alpha1.Application{}
	if err := e.client().Get(e.t.Context(), client.ObjectKey{Namespace: Namespace, Name: name}, app); err != nil {
		e.t.Fatal(err)
	}
	return app.Status.Sync.Revision
}

// waitSyncFailedFinal waits until the app's sync has failed for good
// (its retries spent).
func (e *rehearsalEnv) waitSyncFailedFinal(name string) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		app := &v1alpha1.Application{}
		err := e.client().Get(e.t.Context(), client.ObjectKey{Namespace: Namespace, Name: name}, app)
		if err == nil && app.Status.OperationState != nil && app.Status.OperationState.Phase == v1alpha1.OperationFailed && app.Operation == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: the sync did not fail for good within a minute: %v", name, app.Status.OperationState)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func isPath(p string) func(notifytest.Request) bool {
	return func(q notifytest.Request) bool { return q.Path == p }
}

func filter(reqs []notifytest.Request, match func(notifytest.Request) bool) []notifytest.Request {
	var out []notifytest.Request
	for _, q := range reqs {
		if match(q) {
			out = append(out, q)
		}
	}
	return out
}

// waitDeployed waits for n on-deployed messages to Slack.
func waitDeployed(t *testing.T, rcv *notifytest.Receiver, n int) []notifytest.Request {
	t.Helper()
	return rcv.WaitFor(t, n, time.Minute, func(q notifytest.Request) bool {
		return q.Path == "/api/chat.postMessage" && deployedMessage.MatchString(q.Form.Get("text"))
	})
}

// deployedApps lists "app revision" of each on-deployed message, sorted.
func deployedApps(rcv *notifytest.Receiver) []string {
	var out []string
	for _, q := range rcv.Requests() {
		if m := deployedMessage.FindStringSubmatch(q.Form.Get("text")); m != nil && q.Path == "/api/chat.postMessage" {
			if q.Form.Get("channel") != "deployments" || q.Header.Get("Authorization") != "Bearer xoxb-rehearsal" {
				out = append(out, "wrong channel or token: "+q.Form.Encode())
			}
			out = append(out, m[1]+" "+m[2])
		}
	}
	slices.Sort(out)
	return out
}

// checkBootstrapCard checks the Teams card of on-bootstrap-complete: the
// root, its two apps, a wall time and the slowest wave.
func checkBootstrapCard(t *testing.T, body []byte) {
	t.Helper()
	var card struct {
		Title    string `json:"title"`
		Sections []struct {
			Facts []struct{ Name, Value string } `json:"facts"`
		} `json:"sections"`
	}
	if err := json.Unmarshal(body, &card); err != nil || len(card.Sections) != 1 {
		t.Fatalf("Teams card %s: %v", body, err)
	}
	facts := map[string]string{}
	for _, f := range card.Sections[0].Facts {
		facts[f.Name] = f.Value
	}
	wall, err := time.ParseDuration(facts["Wall time"])
	if card.Title != "Bootstrap of root is complete." || facts["Apps"] != "app-a, app-b" || err != nil || wall <= 0 ||
		!regexp.MustCompile(`^wave [01] of root \(app-[ab], `).MatchString(facts["Slowest wave"]) {
		t.Errorf("bootstrap card: %s %v", card.Title, facts)
	}
}

func mailSubject(data string) string {
	for _, l := range strings.Split(data, "\r\n") {
		if s, ok := strings.CutPrefix(l, "Subject: "); ok {
			return s
		}
	}
	return ""
}
