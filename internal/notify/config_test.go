package notify

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseConfig(t *testing.T) {
	cfg := ParseConfig(map[string]string{
		"service.slack":              "token: $slack-token\napiURL: http://127.0.0.1:1/api/",
		"service.webhook.github":     "url: https://api.github.com\nheaders:\n- name: Authorization\n  value: token $github-token\n- name: X-Missing\n  value: $not-in-secret",
		"service.email.gmail":        "{ username: $email-username, password: $email-password, host: smtp.gmail.com, port: 465, from: $email-username }",
		"service.telegram":           "token: x",
		"service.a.b.c":              "x: y",
		"trigger.on-x":               "- when: app.(\n  send: [t]",
		"trigger.on-ok":              "- when: 'true'\n  send: [t]",
		"template.t":                 "message: '{{.app.metadata.name}}'",
		"template.broken":            "message: '{{'",
		"defaultTriggers":            "- on-ok",
		"defaultTriggers.mattermost": "- on-x\n- on-ok",
		"context":                    "argocdUrl: https://cd.example.com",
		"subscriptions":              "- recipients: [slack:ops]\n  selector: team in (data",
		"unrelated":                  "ignored",
	}, map[string][]byte{
		"slack-token": []byte("xoxb-1"), "github-token": []byte("ghp-2"),
		"email-username": []byte("bot@example.com"), "email-password": []byte("pw-3"),
	})
	wantErrKeys := []string{"service.a.b.c", "service.telegram", "subscriptions", "template.broken", "trigger.on-x"}
	var gotErrKeys []string
	for _, e := range cfg.Errors {
		var ce *ConfigError
		if !errors.As(e, &ce) || !strings.HasPrefix(e.Error(), ConfigMapName+": "+ce.Key+": ") {
			t.Errorf("error %q does not name the ConfigMap and its key", e)
			continue
		}
		gotErrKeys = append(gotErrKeys, ce.Key)
	}
	if diff := cmp.Diff(wantErrKeys, gotErrKeys); diff != "" {
		t.Errorf("keys in error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"on-ok"}, cfg.TriggerNames()); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"t"}, cfg.TemplateNames()); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	wantServices := map[string]struct {
		typ  string
		opts map[string]any
	}{
		"slack": {"slack", map[string]any{"token": "xoxb-1", "apiURL": "http://127.0.0.1:1/api/"}},
		"github": {"webhook", map[string]any{"url": "https://api.github.com", "headers": []any{
			map[string]any{"name": "Authorization", "value": "token ghp-2"},
			map[string]any{"name": "X-Missing", "value": "$not-in-secret"},
		}}},
		"gmail": {"email", map[string]any{"username": "bot@example.com", "password": "pw-3", "host": "smtp.gmail.com", "port": float64(465), "from": "bot@example.com"}},
	}
	if len(cfg.Services) != len(wantServices) {
		t.Errorf("services %v, want %d", cfg.Services, len(wantServices))
	}
	for name, want := range wantServices {
		sc := cfg.Services[name]
		var opts map[string]any
		if err := json.Unmarshal(sc.Options, &opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sc.Type != want.typ || !cmp.Equal(want.opts, opts) {
			t.Errorf("service %s = %s %v, want %s %v", name, sc.Type, opts, want.typ, want.opts)
		}
	}
	if diff := cmp.Diff(map[string][]string{"mattermost": {"on-x", "on-ok"}}, cfg.ServiceDefaultTriggers); diff != "" {
		t.Errorf("service default triggers (-want +got):\n%s", diff)
	}
	if got := cfg.Redact("POST https://hooks/xoxb-1 with pw-3 and bot@example.com"); got != "POST https://hooks/****** with ****** and ******" {
		t.Errorf("Redact = %q", got)
	}
}

// TestDestinations reads subscriptions from the three places Argo CD
// reads them: the app's annotations, its project's, and the
// `subscriptions` key with its selector, with default triggers.
func TestDestinations(t *testing.T) {
	cfg := ParseConfig(map[string]string{
		"defaultTriggers":            "[on-sync-status-unknown]",
		"defaultTriggers.mattermost": "[on-sync-running, on-sync-succeeded]",
		"subscriptions": `
- recipients: [slack:test2, "email:test@gmail.com"]
  triggers: [on-sync-status-unknown]
- recipients: [slack:test3]
  selector: test=true
  triggers: [on-sync-status-unknown]
- recipients: [my-webhook]
`,
	}, nil)
	d := func(s, r string) Destination { return Destination{Service: s, Recipient: r} }
	for name, tc := range map[string]struct {
		labels, annotations, project map[string]string
		want                         Destinations
	}{
		"global subscriptions, selector not matching": {
			want: Destinations{"on-sync-status-unknown": {d("slack", "test2"), d("email", "test@gmail.com"), d("my-webhook", "")}},
		},
		"selector matching": {
			labels: map[string]string{"test": "true"},
			want:   Destinations{"on-sync-status-unknown": {d("slack", "test2"), d("email", "test@gmail.com"), d("slack", "test3"), d("my-webhook", "")}},
		},
		"annotations: trigger and service, shorthand, per-service defaults, list": {
			annotations: map[string]string{
				"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "my-channel1; my-channel2",
				"notifications.argoproj.io/subscribe.slack":                   "my-channel",
				"notifications.argoproj.io/subscribe.mattermost":              "mm",
				"notifications.argoproj.io/subscribe.on-deployed.github":      "",
				"notifications.argoproj.io/subscriptions": `
- trigger: [on-sync-failed, on-health-degraded]
  destinations:
  - {service: slack, recipients: [oncall]}
  - {service: email, recipients: [a@example.com]}
`,
				"other.example.com/x": "y",
			},
			project: map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed.slack": "oncall;platform"},
			want: Destinations{
				"on-sync-status-unknown": {d("slack", "test2"), d("email", "test@gmail.com"), d("my-webhook", ""), d("slack", "my-channel")},
				"on-sync-succeeded":      {d("slack", "my-channel1"), d("slack", "my-channel2"), d("mattermost", "mm")},
				"on-sync-running":        {d("mattermost", "mm")},
				"on-deployed":            {d("github", "")},
				"on-sync-failed":         {d("slack", "oncall"), d("email", "a@example.com"), d("slack", "platform")},
				"on-health-degraded":     {d("slack", "oncall"), d("email", "a@example.com")},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := cfg.Destinations(tc.labels, tc.annotations, tc.project)
			sortDests := cmpopts.SortSlices(func(a, b Destination) bool { return a.String() < b.String() })
			if diff := cmp.Diff(tc.want, got, sortDests); diff != "" {
				t.Errorf("destinations (-want +got):\n%s", diff)
			}
		})
	}
}
