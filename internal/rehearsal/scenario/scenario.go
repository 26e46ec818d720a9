package scenario

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Dir is the folder of a rehearsed repository that holds its scenarios,
// one <name>.yaml each.
const Dir = "scenarios"

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
	// Settings is a file of settings objects (argocd-cm) or an argo-cd Helm
	// chart values file; none when empty.
	Settings string `json:"settings,omitempty"`
	// Profile is the local cluster's rehearsal profile (node groups, CNI
	// mode, images that run a process, workload overrides, an ingress
	// controller); one plain node when empty.
	Profile string `json:"profile,omitempty"`
	// Expect is the verdict the scenario is meant to reach, for the report.
	Expect string `json:"expect,omitempty"`
	// Needs are files that must be next to the wavecd-localcluster binary
	// (bin/), such as the karpenter-kwok binary its process-backed pods
	// run; Build says how to make them.
	Needs []string `json:"needs,omitempty"`
	Build string   `json:"build,omitempty"`
	// Files are added to the served snapshot from next to the
	// wavecd-localcluster binary, such as Karpenter's CRDs.
	Files []File `json:"files,omitempty"`
	// Randomize maps a dotted path of the root's values to a range of
	// durations ("1s-6s") or of whole numbers ("1-6", such as a probe's
	// initialDelaySeconds); each run draws a value from its seed.
	Randomize map[string]string `json:"randomize,omitempty"`
	// Cluster and Webhooks are keys of earlier versions, refused with what
	// replaced them.
	Cluster  any `json:"cluster,omitempty"`
	Webhooks any `json:"webhooks,omitempty"`
}

// File is a file or folder added to the snapshot.
type File struct {
	// From is a file or folder next to the wavecd-localcluster binary.
	From string `json:"from"`
	// To is its path in the snapshot; its parent folder must exist.
	To string `json:"to"`
}

// document is the part of a scenario file wavecd reads.
type document struct {
	Rehearsal *Scenario `json:"rehearsal"`
}

// Load reads scenarios/<name>.yaml of the repository dir.
func Load(dir, name string) (*Scenario, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("scenario %q: want a name from %s/ (%s)", name, Dir, strings.Join(List(dir), ", "))
	}
	rel := filepath.Join(Dir, name+".yaml")
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scenario %q: %s not found; scenarios of %s: %s", name, rel, dir, orNone(List(dir)))
	}
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	var f document
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

// List names the scenarios of the repository dir.
func List(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, Dir, "*.yaml"))
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
	if s.Cluster != nil {
		errs = append(errs, errors.New("rehearsal.cluster: renamed rehearsal.profile (node groups and what else the cluster simulates)"))
	}
	if s.Webhooks != nil {
		errs = append(errs, errors.New("rehearsal.webhooks: no longer needed: the local cluster answers a webhook backed by a Service "+
			"while the Service has a ready endpoint, and fails it otherwise"))
	}
	for _, f := range []struct{ field, path string }{{"root", s.Root}, {"settings", s.Settings}, {"profile", s.Profile}} {
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
	for _, path := range slices.Sorted(maps.Keys(s.Randomize)) {
		if _, err := parseRange(s.Randomize[path]); err != nil {
			errs = append(errs, fmt.Errorf("rehearsal.randomize[%s]: %w", path, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Path, err)
	}
	return nil
}

// CheckNeeds reports the first of the scenario's needs and files missing
// from binDir, with how to build it.
func (s *Scenario) CheckNeeds(binDir string) error {
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
