package rehearsal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// ScenarioDir is the folder of a rehearsed repository that holds its
// scenarios, one <name>.yaml each.
const ScenarioDir = "scenarios"

// Scenario is one way to run a repository's bootstrap: a value file of the
// root Application's Helm chart whose rehearsal: key says how wavecd
// rehearse runs it. Paths are relative to the repository.
type Scenario struct {
	// Name is the file's name without .yaml.
	Name string `json:"-"`
	// Path is the file's path, relative to the repository.
	Path string `json:"-"`
	// Description says in a line what the scenario shows.
	Description string `json:"description"`
	// Root is the root manifest (default apps/root.yaml).
	Root string `json:"root,omitempty"`
	// Settings is a file of settings objects (argocd-cm); none when empty.
	Settings string `json:"settings,omitempty"`
	// Cluster is the local cluster's configuration file (node groups, CNI
	// mode); one plain node when empty.
	Cluster string `json:"cluster,omitempty"`
	// Expect is the verdict the scenario is meant to reach, for the report.
	Expect string `json:"expect,omitempty"`
	// Needs are files that must be next to the wavecd-localcluster binary
	// (bin/), such as the karpenter-kwok binary its process-backed pods
	// run; Build says how to make them.
	Needs []string `json:"needs,omitempty"`
	Build string   `json:"build,omitempty"`
	// Files are added to the served snapshot from next to the
	// wavecd-localcluster binary, such as Karpenter's CRDs.
	Files []ScenarioFile `json:"files,omitempty"`
	// Webhooks are admission webhooks the rehearsal serves in place of
	// pods the API server cannot reach.
	Webhooks []ScenarioWebhook `json:"webhooks,omitempty"`
	// Randomize maps a dotted path of the root's values to a duration
	// range ("1s-6s"); each run draws a value from its seed.
	Randomize map[string]string `json:"randomize,omitempty"`
}

// ScenarioFile is a file or folder added to the snapshot.
type ScenarioFile struct {
	// From is a file or folder next to the wavecd-localcluster binary.
	From string `json:"from"`
	// To is its path in the snapshot; its parent folder must exist.
	To string `json:"to"`
}

// ScenarioWebhook is a webhook served by the rehearsal.
type ScenarioWebhook struct {
	// Backend names the pods that serve the webhook on a real cluster:
	// the webhook answers while one of them is Ready, and fails otherwise.
	Backend struct {
		Namespace string `json:"namespace"`
		Selector  string `json:"selector"`
	} `json:"backend"`
	// Values is the dotted path of the root's values that receives the
	// webhook's url and caBundle.
	Values string `json:"values"`
}

// scenarioFile is the part of a scenario file wavecd reads.
type scenarioFile struct {
	Rehearsal *Scenario `json:"rehearsal"`
}

// LoadScenario reads scenarios/<name>.yaml of the repository dir.
func LoadScenario(dir, name string) (*Scenario, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("scenario %q: want a name from %s/ (%s)", name, ScenarioDir, strings.Join(ListScenarios(dir), ", "))
	}
	rel := filepath.Join(ScenarioDir, name+".yaml")
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scenario %q: %s not found; scenarios of %s: %s", name, rel, dir, orNone(ListScenarios(dir)))
	}
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	var f scenarioFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", rel, err)
	}
	if f.Rehearsal == nil {
		return nil, fmt.Errorf("scenario %s: no rehearsal: key", rel)
	}
	s := f.Rehearsal
	s.Name, s.Path = name, rel
	if s.Root == "" {
		s.Root = filepath.Join("apps", "root.yaml")
	}
	return s, s.validate(dir)
}

// ListScenarios names the scenarios of the repository dir.
func ListScenarios(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, ScenarioDir, "*.yaml"))
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	sort.Strings(out)
	return out
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// validate checks the scenario's fields, each error naming its field.
func (s *Scenario) validate(dir string) error {
	var errs []error
	for _, f := range []struct{ field, path string }{{"root", s.Root}, {"settings", s.Settings}, {"cluster", s.Cluster}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, f.path)); err != nil {
			errs = append(errs, fmt.Errorf("rehearsal.%s: %w", f.field, err))
		}
	}
	for i, f := range s.Files {
		if f.From == "" || f.To == "" || strings.Contains(f.From, "..") || !filepath.IsLocal(f.To) {
			errs = append(errs, fmt.Errorf("rehearsal.files[%d]: want from (a name in bin/) and to (a path in the repository)", i))
		}
	}
	for i, w := range s.Webhooks {
		if _, err := labels.Parse(w.Backend.Selector); err != nil || w.Backend.Selector == "" || w.Backend.Namespace == "" {
			errs = append(errs, fmt.Errorf("rehearsal.webhooks[%d].backend: want namespace and a label selector", i))
		}
		if w.Values == "" {
			errs = append(errs, fmt.Errorf("rehearsal.webhooks[%d].values: required", i))
		}
	}
	for path, r := range s.Randomize {
		if _, _, err := parseRange(r); err != nil {
			errs = append(errs, fmt.Errorf("rehearsal.randomize[%s]: %w", path, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Path, err)
	}
	return nil
}

// checkNeeds reports the first of the scenario's needs and files missing
// from binDir, with how to build it.
func (s *Scenario) checkNeeds(binDir string) error {
	names := slices.Clone(s.Needs)
	for _, f := range s.Files {
		names = append(names, f.From)
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(binDir, n)); err != nil {
			msg := fmt.Sprintf("scenario %s needs %s next to wavecd-localcluster", s.Name, filepath.Join(binDir, n))
			if s.Build != "" {
				msg += ": run " + s.Build
			}
			return errors.New(msg)
		}
	}
	return nil
}

// parseRange parses "1s-6s".
func parseRange(r string) (lo, hi time.Duration, err error) {
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want a range of durations such as 1s-6s", r)
	}
	if lo, err = time.ParseDuration(strings.TrimSpace(a)); err != nil {
		return 0, 0, fmt.Errorf("%q: %w", r, err)
	}
	if hi, err = time.ParseDuration(strings.TrimSpace(b)); err != nil {
		return 0, 0, fmt.Errorf("%q: %w", r, err)
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("%q: the range ends before it starts", r)
	}
	return lo, hi, nil
}

// draw picks each randomized value for a run's seed, rounded to 100ms:
// dotted path -> duration string.
func (s *Scenario) draw(seed int64) map[string]string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	paths := make([]string, 0, len(s.Randomize))
	for p := range s.Randomize {
		paths = append(paths, p)
	}
	slices.Sort(paths) // a seed gives the same values whatever the map order
	out := map[string]string{}
	for _, p := range paths {
		lo, hi, _ := parseRange(s.Randomize[p])
		d := lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
		out[p] = d.Round(100 * time.Millisecond).String()
	}
	return out
}

// setPath sets a dotted path in a nested map, creating the maps on the way.
func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}
