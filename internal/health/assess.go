package health

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/kube"
)

// Options configure an Assessor.
type Options struct {
	// Settings is the data map of the argocd-cm ConfigMap.
	Settings map[string]string
	// LibraryDir is a directory of Lua health checks in Argo CD's
	// resource_customizations layout; empty for none.
	LibraryDir string
	// ArgoParity turns off what wavecd adds to Argo CD: child Application
	// health, the generic condition check and the readiness gates of
	// admission webhook configurations and APIServices.
	ArgoParity bool
	// GenericConditions turns on the generic condition check for custom
	// resources (also on with wavecd.health.genericConditions: "true").
	GenericConditions bool
}

// Source names for Result.Source that are not a Lua script.
const (
	SourcePendingDeletion = "pending deletion"
	SourceBuiltin         = "built-in check"
	SourceApplication     = "child Application health"
	SourceGeneric         = "generic condition check"
)

// Result is a health status and the check that produced it.
type Result struct {
	Status Status
	// Source names the check: a Lua script's name, or one of the Source
	// constants; empty when no check applies.
	Source string
}

// Assessor assesses objects with Argo CD's order of checks (see the package
// documentation). It is safe for concurrent use.
type Assessor struct {
	settings  *Settings
	library   *Library
	childApps bool
	generic   bool
	gates     bool
	choices   sync.Map // schema.GroupKind -> *choice
}

// choice is the check an Assessor picked for one group and kind.
type choice struct {
	check  Check
	source string
	lua    *Script
}

// New builds an Assessor from opts. It fails on malformed settings or an
// unreadable library, naming the key or path at fault.
func New(opts Options) (*Assessor, error) {
	settings, err := ParseSettings(opts.Settings)
	if err != nil {
		return nil, err
	}
	a := &Assessor{
		settings:  settings,
		childApps: settings.ApplicationHealth && !opts.ArgoParity,
		generic:   (opts.GenericConditions || settings.GenericConditions) && !opts.ArgoParity,
		gates:     !opts.ArgoParity,
	}
	if opts.LibraryDir != "" {
		if a.library, err = LoadLibrary(opts.LibraryDir); err != nil {
			return nil, err
		}
		a.library.scripts.each(func(key string, s *Script) { s.OpenLibs = settings.openLibs[key] })
	}
	return a, nil
}

// Assess returns the health of obj; the zero Status when no check applies.
func (a *Assessor) Assess(obj *unstructured.Unstructured) Status {
	return a.Explain(obj).Status
}

// Explain assesses obj like Assess and also names the check used.
func (a *Assessor) Explain(obj *unstructured.Unstructured) Result {
	return a.ExplainWith(obj, nil)
}

// AssessWith returns the health of obj like Assess, with the readiness
// gates read from eps (see ExplainWith).
func (a *Assessor) AssessWith(obj *unstructured.Unstructured, eps Endpoints) Status {
	return a.ExplainWith(obj, eps).Status
}

// ExplainWith assesses obj like Explain and, unless in Argo CD parity,
// holds an admission webhook configuration or an APIService that would be
// Healthy Progressing while a Service it calls has no ready endpoint in
// eps (no gate when eps is nil).
func (a *Assessor) ExplainWith(obj *unstructured.Unstructured, eps Endpoints) Result {
	r := a.explain(obj)
	if a.gates && eps != nil && r.Status.Status == Healthy && IsGated(obj.GroupVersionKind().GroupKind()) {
		if st := gate(obj, eps); st != nil {
			return Result{Status: *st, Source: SourceGate}
		}
	}
	return r
}

func (a *Assessor) explain(obj *unstructured.Unstructured) Result {
	if obj.GetDeletionTimestamp() != nil && !hasHookFinalizer(obj) {
		return Result{Status: Status{Status: Progressing, Message: "Pending deletion"}, Source: SourcePendingDeletion}
	}
	c := a.choose(obj.GroupVersionKind().GroupKind())
	if c.check == nil {
		return Result{}
	}
	st, err := c.check(obj)
	switch {
	case err != nil:
		return Result{Status: Status{Status: Unknown, Message: err.Error()}, Source: c.source}
	case st == nil:
		return Result{}
	}
	return Result{Status: *st, Source: c.source}
}

// HasCheck reports whether any check applies to objects of gk.
func (a *Assessor) HasCheck(gk schema.GroupKind) bool {
	return a.choose(gk).check != nil
}

// Source names the check that assesses objects of gk (one of the Source
// constants or a Lua script's name), or "" when none does.
func (a *Assessor) Source(gk schema.GroupKind) string {
	return a.choose(gk).source
}

// Gates reports whether the Assessor holds admission webhook
// configurations and APIServices on the readiness of the Services they
// call (off in Argo CD parity).
func (a *Assessor) Gates() bool { return a.gates }

// LuaScript returns the Lua script the Assessor would run for gk (an argocd-cm
// override, else a library script), or nil.
func (a *Assessor) LuaScript(gk schema.GroupKind) *Script {
	return a.choose(gk).lua
}

func (a *Assessor) choose(gk schema.GroupKind) *choice {
	if c, ok := a.choices.Load(gk); ok {
		return c.(*choice)
	}
	c, _ := a.choices.LoadOrStore(gk, a.resolve(gk))
	return c.(*choice)
}

// resolve walks the order of checks for gk once; the result is cached.
func (a *Assessor) resolve(gk schema.GroupKind) *choice {
	if s := a.settings.overrides.lookup(gk); s != nil {
		return &choice{check: s.Check, source: s.Name, lua: s}
	}
	if a.library != nil {
		if s := a.library.scripts.lookup(gk); s != nil {
			return &choice{check: s.Check, source: s.Name, lua: s}
		}
	}
	if check := BuiltinCheck(gk); check != nil {
		return &choice{check: check, source: SourceBuiltin}
	}
	if a.gates && IsGated(gk) {
		return &choice{check: webhookConfigHealth, source: SourceGate}
	}
	if a.childApps && gk == applicationGroupKind {
		return &choice{check: applicationHealth, source: SourceApplication}
	}
	if a.generic && kube.IsCustomResource(gk) {
		return &choice{check: genericHealth, source: SourceGeneric}
	}
	return &choice{}
}
