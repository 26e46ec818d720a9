package rehearsal

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// calicoKarpenter is the example the rehearse scenarios come from,
// relative to this package.
const calicoKarpenter = "../../examples/calico-karpenter"

func TestLoadScenario(t *testing.T) {
	if got, want := ListScenarios(calicoKarpenter), []string{"health-gated", "no-health", "no-health-lbc", "no-health-lbc-same-wave", "static-nodes"}; !cmp.Equal(got, want) {
		t.Errorf("scenarios of the example = %v, want %v", got, want)
	}
	for _, name := range ListScenarios(calicoKarpenter) {
		s, err := LoadScenario(calicoKarpenter, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Description == "" || s.Settings == "" || s.Cluster == "" || s.Build != "make karpenter" {
			t.Errorf("%s: %+v, want a description, settings, a cluster and how to build Karpenter", name, s)
		}
	}
	tests := map[string]struct {
		files   map[string]string
		name    string
		wantErr string
	}{
		"unknown name": {
			files: map[string]string{"scenarios/a.yaml": "rehearsal: {}\n"}, name: "b",
			wantErr: `scenario "b": scenarios/b.yaml not found; scenarios of DIR: a`,
		},
		"a path": {name: "../x", wantErr: `scenario "../x": want a name from scenarios/ ()`},
		"no rehearsal key": {
			files: map[string]string{"scenarios/a.yaml": "apps: {}\n"}, name: "a",
			wantErr: "scenario scenarios/a.yaml: no rehearsal: key",
		},
		"bad fields": {
			files: map[string]string{"scenarios/a.yaml": `rehearsal:
  root: missing.yaml
  files: [{from: ../etc, to: x}]
  webhooks: [{backend: {namespace: kube-system, selector: "a in ("}}]
  randomize: {x.y: 6s-1s}
`},
			name: "a",
			wantErr: "scenario scenarios/a.yaml: rehearsal.root: stat DIR/missing.yaml: no such file or directory\n" +
				"rehearsal.files[0]: want from (a name in bin/) and to (a path in the repository)\n" +
				"rehearsal.webhooks[0].backend: want namespace and a label selector\n" +
				"rehearsal.webhooks[0].values: required\n" +
				`rehearsal.randomize[x.y]: "6s-1s": the range ends before it starts`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			_, err := LoadScenario(dir, tc.name)
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.ReplaceAll(err.Error(), dir, "DIR"); got != tc.wantErr {
				t.Errorf("error:\n%s\nwant:\n%s", got, tc.wantErr)
			}
		})
	}
}

func TestScenarioNeeds(t *testing.T) {
	bin := t.TempDir()
	s := &Scenario{Name: "x", Needs: []string{"karpenter-kwok"}, Build: "make karpenter", Files: []ScenarioFile{{From: "karpenter-crds", To: "c"}}}
	want := "scenario x needs " + filepath.Join(bin, "karpenter-kwok") + " next to wavecd-localcluster: run make karpenter"
	if err := s.checkNeeds(bin); err == nil || err.Error() != want {
		t.Errorf("checkNeeds = %v, want %s", err, want)
	}
	writeFiles(t, bin, map[string]string{"karpenter-kwok": "", "karpenter-crds/a.yaml": ""})
	if err := s.checkNeeds(bin); err != nil {
		t.Errorf("checkNeeds with everything there: %v", err)
	}
}

func TestScenarioDrawAndRoot(t *testing.T) {
	s, err := LoadScenario(calicoKarpenter, "no-health-lbc")
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.draw(1), s.draw(1)
	if !cmp.Equal(a, b) || cmp.Equal(a, s.draw(2)) || len(a) != len(s.Randomize) {
		t.Errorf("draw(1) = %v and %v, draw(2) = %v: want the same values for a seed, others for another", a, b, s.draw(2))
	}
	for path, v := range a {
		lo, hi, _ := parseRange(s.Randomize[path])
		if d, err := time.ParseDuration(v); err != nil || d < lo || d > hi {
			t.Errorf("%s = %s, want within %s", path, v, s.Randomize[path])
		}
	}
	root, err := readRoot(filepath.Join(calicoKarpenter, s.Root), Namespace)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	setPath(values, "apps.calico.values.readyDelay.typha", "2s")
	setPath(values, "apps.calico.enabled", true)
	out, err := scenarioRoot(root, s, values)
	if err != nil {
		t.Fatal(err)
	}
	helm := out[0].Object["spec"].(map[string]any)["source"].(map[string]any)["helm"]
	want := map[string]any{
		"valueFiles":   []any{"values.yaml", "../scenarios/no-health-lbc.yaml"},
		"valuesObject": map[string]any{"apps": map[string]any{"calico": map[string]any{"enabled": true, "values": map[string]any{"readyDelay": map[string]any{"typha": "2s"}}}}},
	}
	if diff := cmp.Diff(want, helm); diff != "" {
		t.Errorf("root's helm (-want +got):\n%s", diff)
	}
	if _, ok := root[0].Object["spec"].(map[string]any)["source"].(map[string]any)["helm"].(map[string]any)["valuesObject"]; ok {
		t.Error("scenarioRoot changed the manifest it was given")
	}
}
