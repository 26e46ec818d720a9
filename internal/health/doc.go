// Package health owns health assessment: deciding, for one Kubernetes object,
// whether it is Healthy, Progressing, Degraded, Suspended, Missing or Unknown,
// and folding the health of an application's objects into one status.
//
// An [Assessor] applies Argo CD's order of checks to an object:
//
//  1. an object being deleted is Progressing ("Pending deletion");
//  2. a Lua override from argocd-cm (resource.customizations.health.<group>_<Kind>,
//     then wildcard keys of the legacy resource.customizations block);
//  3. a Lua script from a customizations library directory laid out like Argo
//     CD's resource_customizations (<group>/<Kind>/health.lua, "_" as wildcard);
//  4. a built-in Go check, looked up by group and kind in one map;
//  5. the generic condition check for custom resources, when enabled;
//  6. otherwise the object has no health and does not count.
//
// Lua scripts are compiled once and run with fresh globals, a safe set of
// libraries (unless useOpenLibs: then on a new interpreter with all of them),
// a one second limit and a memory budget of 64 MiB per run (lua_budget.go:
// string.rep, string.format, string.gsub and table.concat check sizes first,
// and the run's context reads the allocation counter as gopher-lua polls it
// before instructions); a run stopped by either fails with an error naming
// the script and the object.
// [Assessor.Aggregate] computes an application's health as the worst health of
// its objects, leaving out hooks, objects annotated
// argocd.argoproj.io/ignore-healthcheck: "true" and child Applications that are
// Missing or Unknown.
//
// Readiness gates (wavecd, off in Argo CD parity): an admission webhook
// configuration (Validating or Mutating, which Argo CD gives no health) and an
// APIService are Progressing while a Service they call has no ready endpoint,
// so the wave that installs them ends only once the next one can be admitted
// ([Assessor.ExplainWith]). Whether a Service has one comes from an
// [Endpoints] the caller hands in: [NewEndpointSlices] over the EndpointSlices
// it read or watches.
//
// The package does not read the cluster or the argocd-cm ConfigMap itself: callers
// hand it objects, the ConfigMap's data map and the EndpointSlices of gates.
package health
