package rehearsal

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/notify"
	"github.com/wavecd/wavecd/internal/source"
)

func TestWithMirrors(t *testing.T) {
	cm := func(data string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\n"+data), &o.Object); err != nil {
			t.Fatal(err)
		}
		return o
	}
	mirrors := source.Mirrors{}
	mirrors.Add("https://github.com/org/repo.git", "/ws/repo")
	tests := map[string]struct {
		settings []*unstructured.Unstructured
		want     map[string]string
		wantErr  string
	}{
		"no settings: an argocd-cm with the mirrors only": {
			want: map[string]string{"wavecd.mirrors": "https://github.com/org/repo: /ws/repo\n"},
		},
		"the file's own keys stay": {
			settings: []*unstructured.Unstructured{cm("data: {timeout.reconciliation: 30s}")},
			want:     map[string]string{"timeout.reconciliation": "30s", "wavecd.mirrors": "https://github.com/org/repo: /ws/repo\n"},
		},
		"the file's own mirror of the same URL wins": {
			settings: []*unstructured.Unstructured{cm("data:\n  wavecd.mirrors: |\n    https://github.com/org/repo.git: /mine\n    https://charts.example.com: /charts\n")},
			want:     map[string]string{"wavecd.mirrors": "https://charts.example.com: /charts\nhttps://github.com/org/repo: /mine\n"},
		},
		"a broken wavecd.mirrors in the file is an error": {
			settings: []*unstructured.Unstructured{cm("data: {wavecd.mirrors: '[not a map'}")},
			wantErr:  "settings: argocd-cm wavecd.mirrors: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := withMirrors(tc.settings, mirrors, Namespace)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d objects, want 1", len(got))
			}
			data, _, _ := unstructured.NestedStringMap(got[0].Object, "data")
			if d := cmp.Diff(tc.want, data); d != "" {
				t.Errorf("argocd-cm data (-want +got):\n%s", d)
			}
			if len(tc.settings) > 0 && tc.settings[0].Object["data"] != nil {
				if _, changed := tc.settings[0].Object["data"].(map[string]any)["wavecd.mirrors"]; changed && name == "the file's own keys stay" {
					t.Error("the settings object given was changed in place")
				}
			}
		})
	}
}

// TestWithNotificationCatalog: an argocd-notifications-cm of the settings
// gets the catalog's keys it lacks, keeps its own, and the object given is
// not changed; settings without one are left as they are.
func TestWithNotificationCatalog(t *testing.T) {
	obj := func(kind, name, data string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte("apiVersion: v1\nkind: "+kind+"\nmetadata: {name: "+name+", namespace: argocd}\n"+data), &o.Object); err != nil {
			t.Fatal(err)
		}
		return o
	}
	catalog, err := notify.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	own := obj("ConfigMap", "argocd-notifications-cm", "data:\n  trigger.on-deployed: mine\n  service.slack: 'token: $slack-token'\n")
	settings := []*unstructured.Unstructured{obj("ConfigMap", "argocd-cm", "data: {timeout.reconciliation: 30s}"), own}
	got, err := withNotificationCatalog(settings)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(got[1].Object, "data")
	for k := range catalog {
		if _, ok := data[k]; !ok {
			t.Errorf("catalog key %s missing", k)
		}
	}
	if data["trigger.on-deployed"] != "mine" || data["service.slack"] != "token: $slack-token" {
		t.Errorf("the file's own keys were not kept: %q, %q", data["trigger.on-deployed"], data["service.slack"])
	}
	if len(own.Object["data"].(map[string]any)) != 2 {
		t.Error("the settings object given was changed in place")
	}
	if d := cmp.Diff(settings[0].Object, got[0].Object); d != "" {
		t.Errorf("argocd-cm changed (-want +got):\n%s", d)
	}
	none, err := withNotificationCatalog(settings[:1])
	if err != nil || len(none) != 1 {
		t.Errorf("settings without notifications: %v, %v", none, err)
	}
}

func TestReadSettings(t *testing.T) {
	tests := map[string]struct {
		file    string
		wantErr string
	}{
		"the example's Lua settings": {file: "../../examples/healthcheck-poc/settings/app-health-lua.yaml"},
		"Argo CD defaults":           {file: "../../examples/healthcheck-poc/settings/argo-default.yaml"},
		"an argo-cd values file":     {file: "../../examples/healthcheck-poc/settings/argocd-values.yaml"},
		"an Application":             {file: "../../examples/healthcheck-poc/apps/root.yaml", wantErr: "is not a v1 ConfigMap or Secret"},
		"a missing file":             {file: "nope.yaml", wantErr: "no such file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := readSettings(tc.file, Namespace)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(s.Objects) != 1 || s.Objects[0].GetName() != "argocd-cm" || s.Objects[0].GetNamespace() != Namespace {
				t.Fatalf("readSettings = %v, %v; want argocd-cm", s, err)
			}
		})
	}
}
