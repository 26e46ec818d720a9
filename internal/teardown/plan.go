package teardown

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/kube"
)

// AnnotationHelmResourcePolicy set to keep keeps an object when its app
// is deleted, as Helm keeps it on uninstall; so does the sync option
// Delete=false (v1alpha1.AnnotationSyncOptions).
const AnnotationHelmResourcePolicy = "helm.sh/resource-policy"

// Options say whose objects a plan deletes and how.
type Options struct {
	// ArgoParity orders the deletion as Argo CD does.
	ArgoParity bool
	// App and AppNamespace name the Application being deleted: an
	// Application object of that name is the app itself, never deleted.
	App, AppNamespace string
	// SyncOptions are the app's syncOptions; Delete=false keeps every
	// object that does not say otherwise.
	SyncOptions []string
}

// Step is a set of objects deleted together; the next step starts once
// they are all gone.
type Step struct {
	// Name says which part of the teardown the step is: "wave 1",
	// "wave 0 (custom resources)", "CustomResourceDefinitions", "Namespaces".
	Name    string
	Objects []*unstructured.Unstructured
}

// Kept is an object a teardown leaves in place, and why.
type Kept struct {
	Object *unstructured.Unstructured
	Reason string
}

// Plan is the order of an app's deletion.
type Plan struct {
	// Steps run in order; each holds at least one object.
	Steps []Step
	Kept  []Kept
	// ArgoParity is Options.ArgoParity.
	ArgoParity bool
}

// NewPlan orders the deletion of live, an app's objects, as the package
// documentation says.
func NewPlan(live []*unstructured.Unstructured, opts Options) Plan {
	p := Plan{ArgoParity: opts.ArgoParity}
	var deleted []*unstructured.Unstructured
	for _, o := range live {
		if reason := keepReason(o, opts); reason != "" {
			p.Kept = append(p.Kept, Kept{Object: o, Reason: reason})
			continue
		}
		deleted = append(deleted, o)
	}
	if opts.ArgoParity {
		p.Steps = argoSteps(deleted)
	} else {
		p.Steps = orderedSteps(deleted)
	}
	return p
}

// keepReason says why o stays, "" when it is deleted.
func keepReason(o *unstructured.Unstructured, opts Options) string {
	switch {
	case isApplication(o) && o.GetName() == opts.App && o.GetNamespace() == opts.AppNamespace:
		return "the app manages itself"
	case hasOption(o.GetAnnotations()[AnnotationHelmResourcePolicy], "keep"):
		return AnnotationHelmResourcePolicy + ": keep"
	case opts.ArgoParity && kube.IsCRD(o):
		return "CustomResourceDefinitions are never deleted with an app (Argo CD)"
	}
	value, set := v1alpha1.ObjectSyncOptions(o.GetAnnotations()).Option("Delete")
	if !set {
		value, set = v1alpha1.SyncOptions(opts.SyncOptions).Option("Delete")
	}
	if set && value == "false" {
		return "sync option Delete=false"
	}
	return ""
}

// hasOption reports whether a comma-separated annotation value lists want.
func hasOption(value, want string) bool {
	return slices.Contains(hook.CSV(value), want)
}

// argoSteps is Argo CD's order: one step per wave, the highest first.
func argoSteps(objs []*unstructured.Unstructured) []Step {
	byWave := map[int][]*unstructured.Unstructured{}
	for _, o := range objs {
		byWave[hook.Wave(o)] = append(byWave[hook.Wave(o)], o)
	}
	waves := slices.Sorted(maps.Keys(byWave))
	slices.Reverse(waves)
	out := make([]Step, 0, len(waves))
	for _, w := range waves {
		out = append(out, Step{Name: fmt.Sprintf("wave %d", w), Objects: sortObjects(byWave[w])})
	}
	return out
}

// The tiers of one wave, deleted in this order.
const (
	tierCustom = iota
	tierBuiltin
)

// part is one step of a wave: a tier, and for child Applications how many
// apps of the wave depend on them, directly or not.
type part struct {
	wave, tier, level int
}

// orderedSteps is wavecd's order: waves from the highest, each in parts
// (custom resources, child Applications by reverse depends-on, then
// built-in objects), then CRDs, then Namespaces.
func orderedSteps(objs []*unstructured.Unstructured) []Step {
	parts := map[part][]*unstructured.Unstructured{}
	var crds, namespaces []*unstructured.Unstructured
	byWave := map[int][]*unstructured.Unstructured{}
	for _, o := range objs {
		switch {
		case kube.IsCRD(o):
			crds = append(crds, o)
		case isNamespace(o):
			namespaces = append(namespaces, o)
		default:
			byWave[hook.Wave(o)] = append(byWave[hook.Wave(o)], o)
		}
	}
	for w, list := range byWave {
		levels := dependencyLevels(list)
		for _, o := range list {
			p := part{wave: w, tier: tierBuiltin}
			if kube.IsCustomResource(o.GroupVersionKind().GroupKind()) {
				p.tier, p.level = tierCustom, levels[appKey(o.GetNamespace(), o.GetName())]
			}
			parts[p] = append(parts[p], o)
		}
	}
	keys := slices.Collect(maps.Keys(parts))
	slices.SortFunc(keys, func(a, b part) int {
		return cmp.Or(cmp.Compare(b.wave, a.wave), cmp.Compare(a.tier, b.tier), cmp.Compare(a.level, b.level))
	})
	perWave := map[int]int{}
	for _, k := range keys {
		perWave[k.wave]++
	}
	var out []Step
	seen := map[int]int{}
	for _, k := range keys {
		seen[k.wave]++
		out = append(out, Step{Name: partName(k, parts[k], seen[k.wave], perWave[k.wave]), Objects: sortObjects(parts[k])})
	}
	if len(crds) > 0 {
		out = append(out, Step{Name: "CustomResourceDefinitions", Objects: sortObjects(crds)})
	}
	if len(namespaces) > 0 {
		out = append(out, Step{Name: "Namespaces", Objects: sortObjects(namespaces)})
	}
	return out
}

// partName names part n of a wave's parts, which holds objs.
func partName(p part, objs []*unstructured.Unstructured, n, of int) string {
	name := fmt.Sprintf("wave %d", p.wave)
	if of == 1 {
		return name
	}
	what := "built-in objects"
	switch {
	case p.tier == tierCustom && !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return !isApplication(o) }):
		what = "Applications"
	case p.tier == tierCustom:
		what = "custom resources"
	}
	return fmt.Sprintf("%s, part %d of %d (%s)", name, n, of, what)
}

// dependencyLevels returns, for each child Application of objs, keyed by
// appKey, the length of the longest chain of apps of objs that depend on
// it (wavecd.io/depends-on names apps of the same namespace): an app
// nobody depends on is level 0 and goes first, the apps it depends on
// after it. A cycle stops the count where it closes.
func dependencyLevels(objs []*unstructured.Unstructured) map[string]int {
	dependents := map[string][]string{}
	apps := map[string]bool{}
	for _, o := range objs {
		if isApplication(o) {
			apps[appKey(o.GetNamespace(), o.GetName())] = true
		}
	}
	for _, o := range objs {
		if !isApplication(o) {
			continue
		}
		self := appKey(o.GetNamespace(), o.GetName())
		for _, name := range hook.CSV(o.GetAnnotations()[application.AnnotationDependsOn]) {
			if d := appKey(o.GetNamespace(), name); apps[d] && d != self {
				dependents[d] = append(dependents[d], self)
			}
		}
	}
	levels := map[string]int{}
	var level func(key string, path map[string]bool) int
	level = func(key string, path map[string]bool) int {
		if l, ok := levels[key]; ok {
			return l
		}
		path[key] = true
		defer delete(path, key)
		l := 0
		for _, d := range dependents[key] {
			if !path[d] {
				l = max(l, level(d, path)+1)
			}
		}
		levels[key] = l
		return l
	}
	for _, key := range slices.Sorted(maps.Keys(apps)) {
		level(key, map[string]bool{})
	}
	return levels
}

func appKey(namespace, name string) string { return namespace + "/" + name }

func isApplication(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return application.IsApplication(gvk.Group, gvk.Kind)
}

func isNamespace(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Namespace"
}

// sortObjects sorts objects by kind, namespace and name, for stable
// messages and tests.
func sortObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	slices.SortFunc(objs, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(strings.Compare(describe(a), describe(b)), strings.Compare(kube.RefOf(a).String(), kube.RefOf(b).String()))
	})
	return objs
}
