package notify

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/notify/notifytest"
)

// TestReadmeExample reads the Slack and webhook setup docs/notifications.md
// shows and sends with it as it is, only the hosts pointing at a receiver:
// the settings parse without an error, the subscriptions resolve, and the
// messages arrive.
func TestReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(b)
	yamlAt := strings.Index(section, "```yaml\n")
	if yamlAt < 0 {
		t.Fatal("docs/notifications.md has no YAML block")
	}
	start := yamlAt + len("```yaml\n")
	block := section[start : start+strings.Index(section[start:], "```")]
	rcv := notifytest.NewReceiver(t)
	block = strings.ReplaceAll(block, "https://jenkins.example.com", rcv.URL)
	block = strings.Replace(block, "token: $slack-token", "token: $slack-token\n    apiURL: "+rcv.URL+"/api/", 1)
	var cm map[string]string
	var secret map[string][]byte
	for _, doc := range strings.Split(block, "\n---\n") {
		var obj struct {
			Kind       string            `json:"kind"`
			Data       map[string]string `json:"data"`
			StringData map[string]string `json:"stringData"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("docs/notifications.md YAML: %v", err)
		}
		switch obj.Kind {
		case "ConfigMap":
			cm = obj.Data
		case "Secret":
			secret = map[string][]byte{}
			for k, v := range obj.StringData {
				secret[k] = []byte(v)
			}
		}
	}
	data, err := WithCatalog(cm)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ParseConfig(data, secret)
	if len(cfg.Errors) > 0 {
		t.Fatalf("docs/notifications.md settings: %v", cfg.Errors)
	}
	app := loadApp(t, "apps/deployed.yaml")
	app["metadata"].(map[string]any)["annotations"] = map[string]any{
		"notifications.argoproj.io/subscribe.on-deployed.slack":         "deployments",
		"notifications.argoproj.io/subscribe.on-deployed-smoke.jenkins": "",
	}
	out := cfg.Evaluate(app, nil, Env{}, State{}, nil)
	if len(out.Send) != 2 {
		t.Fatalf("sent %+v, want on-deployed to Slack and the smoke tests; errors %v", out.Send, out.Errors)
	}
	for _, p := range out.Send {
		n, err := cfg.Render(app, Env{}, p)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := NewService(cfg.Services[p.Dest.Service], serviceEnv{threads: newSlackThreads()})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Send(context.Background(), n, p.Dest); err != nil {
			t.Fatalf("%s: %v", p.Trigger, err)
		}
	}
	reqs := rcv.Requests()
	var got []string
	for _, q := range reqs {
		got = append(got, q.Method+" "+q.Path+" "+q.Query.Encode()+" "+q.Header.Get("Authorization"))
	}
	want := []string{
		"POST /api/chat.postMessage  Bearer xoxb-...",
		"POST /job/smoke-tests/buildWithParameters APP=app-a&REVISION=4f2e1c9a7b Bearer ...",
	}
	if strings.Join(sorted(got), "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(sorted(got), "\n"), strings.Join(want, "\n"))
	}
}

func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
