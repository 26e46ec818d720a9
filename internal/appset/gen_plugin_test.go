package appset

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// pluginAnswer is what the test's plugin answers: two environments.
const pluginAnswer = `{"output": {"parameters": [
  {"name": "dev", "replicas": 1, "labels": {"tier": "front"}},
  {"name": "prod", "replicas": 3, "labels": {"tier": "front"}}]}}`

// testPlugin is a plugin as Argo CD documents one, on loopback: POST
// /api/v1/getparams.execute with the bearer token s3cr3t. Under /slow it
// answers only after 3 s. It records the requests it was sent.
type testPlugin struct {
	url    string
	mu     sync.Mutex
	sent   []pluginRequest
	answer string // pluginAnswer unless set
}

// answerWith makes the plugin answer a instead.
func (p *testPlugin) answerWith(a string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = a
}

func startPlugin(t *testing.T) *testPlugin {
	t.Helper()
	p := &testPlugin{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/api/v1/getparams.execute") {
			http.Error(w, `{"message": "no such endpoint"}`, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer s3cr3t" {
			http.Error(w, `{"message": "bad token"}`, http.StatusUnauthorized)
			return
		}
		var req pluginRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error": "bad request"}`, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.sent = append(p.sent, req)
		answer := cmp.Or(p.answer, pluginAnswer)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// pluginObjects are testdata/plugin/objects.yaml pointing at p.
func (p *testPlugin) objects(t *testing.T) StaticObjects {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "plugin", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out StaticObjects
	for _, doc := range splitYAML(t, strings.ReplaceAll(string(raw), "PLUGIN_URL", p.url)) {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// TestPluginGenerator asks the plugin for parameter sets with goTemplate
// and fasttemplate, with the token in argocd-secret or in a Secret of its
// own, and checks what the plugin was sent and when it is asked again.
func TestPluginGenerator(t *testing.T) {
	tests := map[string]struct {
		want        string
		wantInput   string
		wantRequeue time.Duration
	}{
		"gotemplate":   {want: "want-gotemplate.yaml", wantInput: `{"regions":["eu","us"],"team":"shop"}`, wantRequeue: DefaultPluginRequeue},
		"fasttemplate": {want: "want-fasttemplate.yaml", wantInput: `{"team":"shop"}`, wantRequeue: time.Minute},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := startPlugin(t)
			dir := filepath.Join("testdata", "plugin")
			set := readAppSet(t, filepath.Join(dir, "appset-"+name+".yaml"))
			got, err := Generate(context.Background(), set, Inputs{Objects: p.objects(t)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(readApps(t, filepath.Join(dir, tc.want)), got.Apps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("apps (-want +got):\n%s", diff)
			}
			if got.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tc.wantRequeue)
			}
			if len(p.sent) != 1 || p.sent[0].ApplicationSetName != "envs" {
				t.Fatalf("the plugin was sent %+v, want one request for envs", p.sent)
			}
			input, err := json.Marshal(p.sent[0].Input.Parameters)
			if err != nil || string(input) != tc.wantInput {
				t.Errorf("input.parameters sent %s (%v), want %s", input, err, tc.wantInput)
			}
		})
	}
}

// TestPluginGeneratorErrors names the ConfigMap, the Secret or the
// plugin's own message, and never generates a partial result.
func TestPluginGeneratorErrors(t *testing.T) {
	tests := map[string]struct {
		configMap string
		noObjects bool
		wantErr   string
	}{
		"a ConfigMap that is not there":  {configMap: "missing", wantErr: `ConfigMap argocd/missing: configmaps "missing" not found`},
		"a token that is no reference":   {configMap: "no-token", wantErr: `token "plain-text-token" is empty or does not reference a Secret key starting with '$'`},
		"a key the Secret lacks":         {configMap: "unset-token", wantErr: `secret argocd/argocd-secret has no key "plugin.unset.token"`},
		"a token the plugin refuses":     {configMap: "wrong-token", wantErr: "API error with status code 401: bad token"},
		"a plugin slower than its limit": {configMap: "slow-plugin", wantErr: "context deadline exceeded"},
		"no namespace to read":           {configMap: "envs-plugin", noObjects: true, wantErr: "not available here"},
	}
	p := startPlugin(t)
	objects := p.objects(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := readAppSet(t, filepath.Join("testdata", "plugin", "appset-gotemplate.yaml"))
			set.Spec.Generators[0].Plugin.ConfigMapRef.Name = tc.configMap
			in := Inputs{Objects: objects}
			if tc.noObjects {
				in.Objects = nil
			}
			got, err := Generate(context.Background(), set, in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "generators[0].plugin: ") {
				t.Fatalf("error = %v, want one naming generators[0].plugin and containing %q", err, tc.wantErr)
			}
			if got != nil {
				t.Errorf("a failed generation returned %d apps", len(got.Apps))
			}
		})
	}
}
