package notify

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// testNow is the clock of the fixtures: ten minutes after app-f started
// waiting for its dependency.
var testNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// loadObjects reads the objects of a YAML file under testdata.
func loadObjects(t testing.TB, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	d := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []map[string]any
	for {
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", path, err)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
}

// loadApps reads the Applications of a YAML file under testdata, typed.
func loadApps(t testing.TB, path string) []*v1alpha1.Application {
	t.Helper()
	var out []*v1alpha1.Application
	for _, o := range loadObjects(t, path) {
		out = append(out, toApp(o))
	}
	return out
}

func loadApp(t testing.TB, path string) map[string]any {
	t.Helper()
	return loadObjects(t, path)[0]
}

func catalogConfig(t *testing.T) *Config {
	t.Helper()
	data, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	cfg := ParseConfig(data, nil)
	if len(cfg.Errors) > 0 {
		t.Fatalf("catalog: %v", cfg.Errors)
	}
	return cfg
}

// TestCatalogTriggers runs every trigger of the catalog against apps in
// the states Argo CD's triggers are written for, and wavecd's.
func TestCatalogTriggers(t *testing.T) {
	cfg := catalogConfig(t)
	for name, tc := range map[string]struct {
		app  string
		apps string // the namespace's apps, for wavecd.Bootstrap()
		want []string
	}{
		"synced and healthy, just deployed": {app: "apps/deployed.yaml", want: []string{"on-created", "on-deployed", "on-sync-succeeded"}},
		"sync failed on a hook":             {app: "apps/sync-failed.yaml", want: []string{"on-created", "on-sync-failed"}},
		"sync running":                      {app: "apps/sync-running.yaml", want: []string{"on-created", "on-sync-running"}},
		"new app, no status":                {app: "apps/new.yaml", want: []string{"on-created"}},
		"deleted, degraded, unknown":        {app: "apps/degraded-unknown.yaml", want: []string{"on-created", "on-deleted", "on-health-degraded", "on-sync-status-unknown"}},
		"stalled by its own pods":           {app: "apps/stalled.yaml", want: []string{"on-created", "on-stalled", "on-sync-running"}},
		"stalled through a child":           {app: "apps/stalled-parent.yaml", want: []string{"on-created", "on-sync-running"}},
		"waits 10 minutes on a dependency":  {app: "apps/dependency-wait.yaml", want: []string{"on-created", "on-dependency-wait"}},
		"root of a settled bootstrap":       {app: "bootstrap/complete.yaml", apps: "bootstrap/complete.yaml", want: []string{"on-bootstrap-complete", "on-created", "on-deployed", "on-sync-succeeded"}},
		"root while a child still syncs":    {app: "bootstrap/running.yaml", apps: "bootstrap/running.yaml", want: []string{"on-created", "on-deployed", "on-sync-succeeded"}},
	} {
		t.Run(name, func(t *testing.T) {
			app := loadApp(t, tc.app)
			env := Env{Now: func() time.Time { return testNow }}
			if tc.apps != "" {
				all := loadApps(t, tc.apps)
				env.Apps = func() []*v1alpha1.Application { return all }
			}
			vars := cfg.Vars(app, env, Destination{})
			var got []string
			for _, name := range cfg.TriggerNames() {
				for _, r := range cfg.Triggers[name].Run(vars) {
					if r.Triggered {
						got = append(got, name)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("triggers fired (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTriggerRun covers Argo CD's condition forms: a list, a single
// condition, oncePer, an expression that fails, an empty when.
func TestTriggerRun(t *testing.T) {
	app := loadApp(t, "apps/deployed.yaml")
	vars := (&Config{}).Vars(app, Env{Now: func() time.Time { return testNow }}, Destination{})
	type result struct {
		Triggered bool
		OncePer   string
		Failed    bool
	}
	for name, tc := range map[string]struct {
		yaml string
		want []result
	}{
		"condition list": {
			yaml: "- when: app.status.operationState.phase in ['Running']\n  send: [a]\n- when: app.status.operationState.phase in ['Succeeded']\n  send: [b]",
			want: []result{{}, {Triggered: true}},
		},
		"single condition with oncePer": {
			yaml: "when: app.status.health.status == 'Healthy'\noncePer: app.status.sync.revision\nsend: [a]",
			want: []result{{Triggered: true, OncePer: "4f2e1c9a7b"}},
		},
		"oncePer on an annotation": {
			yaml: "- when: 'true'\n  oncePer: app.metadata.annotations['notifications.argoproj.io/subscribe.on-deployed.slack']\n  send: [a]",
			want: []result{{Triggered: true, OncePer: "ops;dev"}},
		},
		"oncePer not evaluated when the condition does not hold": {
			yaml: "- when: 'false'\n  oncePer: app.nothing.here\n  send: [a]",
			want: []result{{}},
		},
		"a field of nothing fails and does not fire": {
			yaml: "- when: app.status.missing.phase == 'x'\n  send: [a]",
			want: []result{{Failed: true}},
		},
		"time and strings functions": {
			yaml: "- when: time.Now().Sub(time.Parse(app.status.operationState.startedAt)).Minutes() < 1 and strings.ToUpper(app.metadata.name) == 'APP-A'\n  send: [a]",
			want: []result{{Triggered: true}},
		},
		"sync.GetInfoItem": {
			yaml: "- when: sync.GetInfoItem(app, 'ticket') == 'OPS-42'\n  send: [a]",
			want: []result{{Triggered: true}},
		},
		"no when never fires": {
			yaml: "- send: [a]",
			want: []result{{}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := ParseTrigger("t", tc.yaml)
			if err != nil {
				t.Fatal(err)
			}
			var got []result
			for _, r := range tr.Run(vars) {
				got = append(got, result{Triggered: r.Triggered, OncePer: r.OncePer, Failed: r.Err != nil})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTriggerErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"bad when":    {"- when: app.status ==\n  send: [a]", "condition 0: when:"},
		"bad oncePer": {"- when: 'true'\n  oncePer: app.(\n  send: [a]", "condition 0: oncePer:"},
		"not YAML":    {"- when: [", "yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTrigger("t", tc.yaml)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestEvaluateOncePer walks an app through states and checks what is sent
// at each step: once per oncePer value, again after a condition without
// oncePer stops and starts holding, and nothing twice.
func TestEvaluateOncePer(t *testing.T) {
	cfg := ParseConfig(map[string]string{
		"trigger.on-deployed":     "- when: app.status.health.status == 'Healthy'\n  oncePer: app.status.sync.revision\n  send: [t]",
		"trigger.on-health-check": "- when: app.status.health.status == 'Degraded'\n  send: [t]",
		"template.t":              "message: x",
		"defaultTriggers":         "[on-health-check]",
	}, nil)
	app := func(health, rev string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "a", "annotations": map[string]any{
				"notifications.argoproj.io/subscribe.on-deployed.slack": "ops",
				"notifications.argoproj.io/subscribe.webhook":           "",
			}},
			"status": map[string]any{"health": map[string]any{"status": health}, "sync": map[string]any{"revision": rev}},
		}
	}
	st := State{}
	for _, step := range []struct {
		name        string
		app         map[string]any
		want        []string
		wantChanged bool
	}{
		{"first deploy of r1", app("Healthy", "r1"), []string{"on-deployed slack:ops"}, true},
		{"r1 again", app("Healthy", "r1"), nil, false},
		{"degraded", app("Degraded", "r1"), []string{"on-health-check webhook"}, true},
		{"still degraded", app("Degraded", "r1"), nil, false},
		{"healthy again at r1: oncePer holds", app("Healthy", "r1"), nil, true},
		{"degraded again: no oncePer, sent again", app("Degraded", "r1"), []string{"on-health-check webhook"}, true},
		{"r2 deployed", app("Healthy", "r2"), []string{"on-deployed slack:ops"}, true},
	} {
		out := cfg.Evaluate(step.app, nil, Env{Now: func() time.Time { return testNow }}, st, nil)
		var got []string
		for _, p := range out.Send {
			got = append(got, p.Trigger+" "+p.Dest.String())
		}
		slices.Sort(got)
		if diff := cmp.Diff(step.want, got); diff != "" || out.Changed != step.wantChanged {
			t.Errorf("%s: sent (-want +got):\n%s changed %v, want %v", step.name, diff, out.Changed, step.wantChanged)
		}
	}
	// The state survives a restart through the annotation, in Argo CD's form.
	again := ParseState(st.Encode())
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("state after encoding (-want +got):\n%s", diff)
	}
	if _, ok := again["r2:on-deployed:[0]."+conditionHash("app.status.health.status == 'Healthy'")+":slack:ops"]; !ok {
		t.Errorf("state %v lacks Argo CD's key of the r2 notification", again)
	}
}

func TestStateKeepsTheNewest(t *testing.T) {
	st := State{}
	for i := range maxNotified + 5 {
		st[string(rune('a'+i%26))+string(rune('0'+i/26))] = int64(i)
	}
	got := ParseState(st.Encode())
	if len(got) != maxNotified {
		t.Fatalf("%d entries, want %d", len(got), maxNotified)
	}
	for k, v := range got {
		if v < 5 {
			t.Errorf("entry %s (%d) kept; the oldest should go", k, v)
		}
	}
}

func unstructuredApp(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}
