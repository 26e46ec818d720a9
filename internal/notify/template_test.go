package notify

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestCatalogTemplatesGolden renders each template of the catalog that a
// fixture's triggers send, for Slack, and compares with testdata/golden.
// Every Slack attachment and Teams fact list must be valid JSON.
func TestCatalogTemplatesGolden(t *testing.T) {
	cfg := catalogConfig(t)
	cfg.Context["argocdUrl"] = "https://cd.example.com"
	for name, tc := range map[string]struct{ app, apps string }{
		"deployed":           {app: "apps/deployed.yaml"},
		"sync-failed":        {app: "apps/sync-failed.yaml"},
		"stalled":            {app: "apps/stalled.yaml"},
		"dependency-wait":    {app: "apps/dependency-wait.yaml"},
		"degraded-unknown":   {app: "apps/degraded-unknown.yaml"},
		"bootstrap-complete": {app: "bootstrap/complete.yaml", apps: "bootstrap/complete.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			app := loadApp(t, tc.app)
			env := Env{Now: func() time.Time { return testNow }}
			if tc.apps != "" {
				all := loadApps(t, tc.apps)
				env.Apps = func() []*v1alpha1.Application { return all }
			}
			vars := cfg.Vars(app, env, Destination{})
			rendered := map[string]map[string]*Notification{}
			for _, trigger := range cfg.TriggerNames() {
				for _, r := range cfg.Triggers[trigger].Run(vars) {
					if !r.Triggered {
						continue
					}
					rendered[trigger] = map[string]*Notification{}
					for _, service := range []string{"slack", "email"} {
						n, err := cfg.Render(app, env, Pending{Trigger: trigger, Templates: r.Condition.Send, Dest: Destination{Service: service, Recipient: "ops"}})
						if err != nil {
							t.Fatalf("%s for %s: %v", trigger, service, err)
						}
						checkJSONFields(t, trigger, n)
						rendered[trigger][service] = n
					}
				}
			}
			got, err := yaml.Marshal(rendered)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "golden", name+".yaml"), got)
		})
	}
}

// checkJSONFields checks that the fields services parse as JSON are JSON.
func checkJSONFields(t *testing.T, trigger string, n *Notification) {
	t.Helper()
	fields := map[string]string{}
	if n.Slack != nil {
		fields["slack.attachments"], fields["slack.blocks"] = n.Slack.Attachments, n.Slack.Blocks
	}
	if n.Teams != nil {
		fields["teams.facts"], fields["teams.potentialAction"], fields["teams.sections"] = n.Teams.Facts, n.Teams.PotentialAction, n.Teams.Sections
	}
	for f, v := range fields {
		var list []any
		if strings.TrimSpace(v) != "" && json.Unmarshal([]byte(v), &list) != nil {
			t.Errorf("%s: %s is not a JSON list:\n%s", trigger, f, v)
		}
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); run with -update if the change is right:\n%s", path, diff)
	}
}

// TestTemplateRender covers the variables and functions templates see.
func TestTemplateRender(t *testing.T) {
	app := loadApp(t, "apps/deployed.yaml")
	cfg := ParseConfig(map[string]string{"context": "region: east\nargocdUrl: https://cd.example.com"},
		map[string][]byte{"token": []byte("s3cr3t")})
	env := Env{Now: func() time.Time { return testNow }, Project: map[string]any{"spec": map[string]any{"description": "the team's apps"}}}
	for name, tc := range map[string]struct{ tmpl, want string }{
		"app fields":          {`{{.app.metadata.name}} {{.app.status.sync.revision}}`, "app-a 4f2e1c9a7b"},
		"context and legacy":  {`{{.context.region}} {{.context.notificationType}} {{.context.argocdUrl}}`, "east slack https://cd.example.com"},
		"service and to":      {`{{.serviceType}} {{.recipient}}`, "slack ops"},
		"secrets":             {`{{.secrets.token}}`, "s3cr3t"},
		"project":             {`{{.appProject.spec.description}}`, "the team's apps"},
		"time.Parse":          {`{{(call .time.Parse .app.status.operationState.startedAt).Format "15:04"}}`, "10:00"},
		"time.Now":            {`{{(call .time.Now).Year}}`, "2026"},
		"strings":             {`{{call .strings.ToUpper .app.metadata.name}} {{call .strings.ReplaceAll "a-b" "-" "+"}}`, "APP-A a+b"},
		"repo functions":      {`{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}} {{call .repo.FullNameByRepoURL .app.spec.source.repoURL}} {{call .repo.QueryEscape "a b"}}`, "https://github.com/example/healthcheck-poc.git example/healthcheck-poc a+b"},
		"sync.GetInfoItem":    {`{{call .sync.GetInfoItem .app "ticket"}}`, "OPS-42"},
		"sprig":               {`{{.app.metadata.name | upper | quote}} {{ list 1 2 | len }}`, `"APP-A" 2`},
		"sprig without env":   {`{{ env "HOME" }}`, "error"},
		"missing field":       {`{{.app.status.nothing}}`, "<no value>"},
		"function that fails": {`{{call .repo.GetCommitMetadata "abc"}}`, "error"},
	} {
		t.Run(name, func(t *testing.T) {
			tmpl, err := ParseTemplate("t", "message: '"+strings.ReplaceAll(tc.tmpl, "'", "''")+"'")
			if err != nil {
				if tc.want == "error" {
					return
				}
				t.Fatal(err)
			}
			n, err := tmpl.Render(cfg.Vars(app, env, Destination{Service: "slack", Recipient: "ops"}))
			if tc.want == "error" {
				if err == nil {
					t.Errorf("rendered %q, want an error", n.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Message != tc.want {
				t.Errorf("got %q, want %q", n.Message, tc.want)
			}
		})
	}
}

// TestRenderAllMerges: a trigger sending several templates gets one
// notification, later templates' fields over earlier ones'.
func TestRenderAllMerges(t *testing.T) {
	a, err := ParseTemplate("a", "message: from a\nemail: {subject: 'subject a', body: 'body a'}\nslack: {username: bot}")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseTemplate("b", "email: {subject: 'subject {{.app.metadata.name}}'}\nwebhook:\n  github: {method: POST, path: '/statuses/{{.app.status.sync.revision}}', body: '{}'}")
	if err != nil {
		t.Fatal(err)
	}
	n, err := RenderAll(map[string]*Template{"a": a, "b": b}, []string{"a", "b"}, (&Config{}).Vars(loadApp(t, "apps/deployed.yaml"), Env{}, Destination{}))
	if err != nil {
		t.Fatal(err)
	}
	want := &Notification{
		Message: "from a",
		Email:   &EmailNotification{Subject: "subject app-a", Body: "body a"},
		Slack:   &SlackNotification{Username: "bot"},
		Webhook: map[string]WebhookNotification{"github": {Method: "POST", Path: "/statuses/4f2e1c9a7b", Body: "{}"}},
	}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}
	if _, err := RenderAll(map[string]*Template{}, []string{"nope"}, nil); err == nil || !strings.Contains(err.Error(), `template "nope" is not defined`) {
		t.Errorf("missing template: %v", err)
	}
}

func TestParseTemplateErrors(t *testing.T) {
	_, err := ParseTemplate("t", "slack:\n  attachments: '{{ .app'")
	if err == nil || !strings.Contains(err.Error(), "slack.attachments") {
		t.Errorf("error = %v, want one naming slack.attachments", err)
	}
}
