package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// calicoKarpenter is the example the rehearse scenarios come from,
// relative to this package.
const calicoKarpenter = "../../../examples/calico-karpenter"

func TestLoadScenario(t *testing.T) {
	if got, want := List(calicoKarpenter), []string{"health-gated", "no-health", "no-health-lbc", "no-health-lbc-same-wave", "static-nodes"}; !cmp.Equal(got, want) {
		t.Errorf("scenarios of the example = %v, want %v", got, want)
	}
	for _, name := range List(calicoKarpenter) {
		s, err := Load(calicoKarpenter, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Description == "" || s.Settings == "" || s.Profile == "" || s.Build != "make karpenter" {
			t.Errorf("%s: %+v, want a description, settings, a profile and how to build Karpenter", name, s)
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
  profile: profiles/none.yaml
  files: [{from: ../etc, to: x}]
  randomize: {x.y: 6s-1s, x.z: 1-2s}
`},
			name: "a",
			wantErr: "scenario scenarios/a.yaml: rehearsal.root: stat DIR/missing.yaml: no such file or directory\n" +
				"rehearsal.profile: stat DIR/profiles/none.yaml: no such file or directory\n" +
				"rehearsal.files[0]: want from (a name in bin/) and to (a path in the repository)\n" +
				`rehearsal.randomize[x.y]: "6s-1s": the range ends before it starts` + "\n" +
				`rehearsal.randomize[x.z]: "1-2s": strconv.ParseInt: parsing "2s": invalid syntax`,
		},
		"keys of earlier versions": {
			files: map[string]string{"scenarios/a.yaml": `rehearsal:
  root: r.yaml
  cluster: clusters/x.yaml
  webhooks: [{values: a.b}]
`, "r.yaml": ""},
			name: "a",
			wantErr: "scenario scenarios/a.yaml: rehearsal.cluster: renamed rehearsal.profile (node groups and what else the cluster simulates)\n" +
				"rehearsal.webhooks: no longer needed: the local cluster answers a webhook backed by a Service while the Service " +
				"has a ready endpoint, and fails it otherwise",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			folder.Write(t, dir, tc.files)
			_, err := Load(dir, tc.name)
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
	s := &Scenario{Name: "x", Needs: []string{"karpenter-kwok"}, Build: "make karpenter", Files: []File{{From: "karpenter-crds", To: "c"}}}
	want := "scenario x needs " + filepath.Join(bin, "karpenter-kwok") + " next to wavecd-localcluster: run make karpenter"
	if err := s.CheckNeeds(bin); err == nil || err.Error() != want {
		t.Errorf("checkNeeds = %v, want %s", err, want)
	}
	folder.Write(t, bin, map[string]string{"karpenter-kwok": "", "karpenter-crds/a.yaml": ""})
	if err := s.CheckNeeds(bin); err != nil {
		t.Errorf("checkNeeds with everything there: %v", err)
	}
}

func TestScenarioDrawAndRoot(t *testing.T) {
	s, err := Load(calicoKarpenter, "no-health-lbc")
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Draw(1), s.Draw(1)
	if !cmp.Equal(a, b) || cmp.Equal(a, s.Draw(2)) || len(a) != len(s.Randomize) {
		t.Errorf("draw(1) = %v and %v, draw(2) = %v: want the same values for a seed, others for another", a, b, s.Draw(2))
	}
	for path, v := range a {
		vr, _ := parseRange(s.Randomize[path])
		n, ok := v.(int64)
		if !vr.numbers || !ok || n < vr.lo || n > vr.hi {
			t.Errorf("%s = %v, want a whole number within %s", path, v, s.Randomize[path])
		}
	}
	d, _ := (&Scenario{Randomize: map[string]string{"a": "1s-6s"}}).Draw(3)["a"].(string)
	if got, err := time.ParseDuration(d); err != nil || got < time.Second || got > 6*time.Second || got != got.Round(100*time.Millisecond) {
		t.Errorf("a drawn duration %q, want 1s to 6s in steps of 100ms", d)
	}
	root, err := manifest.ReadRoot(filepath.Join(calicoKarpenter, s.Root), "argocd")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	setPath(values, "apps.calico.values.readinessDelay.typha", int64(2))
	setPath(values, "apps.calico.enabled", true)
	out, err := Root(root, s, values)
	if err != nil {
		t.Fatal(err)
	}
	helm := out[0].Object["spec"].(map[string]any)["source"].(map[string]any)["helm"]
	want := map[string]any{
		"valueFiles":   []any{"values.yaml", "../scenarios/no-health-lbc.yaml"},
		"valuesObject": map[string]any{"apps": map[string]any{"calico": map[string]any{"enabled": true, "values": map[string]any{"readinessDelay": map[string]any{"typha": int64(2)}}}}},
	}
	if diff := cmp.Diff(want, helm); diff != "" {
		t.Errorf("root's helm (-want +got):\n%s", diff)
	}
	if _, ok := root[0].Object["spec"].(map[string]any)["source"].(map[string]any)["helm"].(map[string]any)["valuesObject"]; ok {
		t.Error("scenarioRoot changed the manifest it was given")
	}
}
