// Package teardown owns the deletion of an application's objects when its
// resources finalizer asks for it: which objects go, in which order, what
// each step waits for, and why a step that does not finish is stuck.
//
// # Order
//
// [NewPlan] splits an app's live objects into steps. Objects left in
// place are kept, with the reason: an object or app sync option
// Delete=false, helm.sh/resource-policy: keep, and an Application that
// manages itself, as Argo CD keeps them.
//
// wavecd's order undoes a sync: waves from the highest to the lowest;
// within a wave, custom resources (child Applications among them) before
// the built-in objects, since a custom resource's finalizer is cleared by
// a controller that built-in objects of the same wave (a Deployment, its
// RBAC) run; among the child Applications of one wave, an app before the
// apps its wavecd.io/depends-on names; CustomResourceDefinitions and
// Namespaces last. A CRD whose kind still serves objects of another app is
// kept (deleting it would delete them). Each step waits until its objects
// are gone, finalizers cleared, before the next starts, so an operator is
// still running while the finalizers of its custom resources are cleared,
// and a child Application is gone (its own objects deleted in its own
// order) before the previous wave's apps are deleted.
//
// Argo CD's order (parity): CustomResourceDefinitions are never deleted;
// while any object of the app is being deleted nothing else is; else every
// object of the highest wave left is deleted at once. Objects of one wave,
// an operator and its custom resources alike, go together.
//
// # Running
//
// [Advance] runs one pass of a plan against a cluster: it deletes the
// objects of the current step that are not being deleted yet (in wavecd's
// order a hook's own argocd.argoproj.io/hook-finalizer is removed first: no
// sync will read it; Argo CD leaves it) and reports the step, what it waits
// on and whether the teardown is done; [Progress.Stalled] says when a step
// has waited longer than the stall timeout. It keeps no state: the controller calls it again on every event
// of the app's objects, and after a restart it picks up where the objects
// say it is.
//
// [Explain] says why an object of a step is not gone: its finalizers and
// who clears them (the garbage collector, the namespace controller, the
// API server for a CRD's objects, the application controller for a child
// Application and how far its own teardown is, or the controller of a
// custom resource's API group and the app that installed its CRD).
//
// What the package does not own: the deletion stages of an app and its
// PreDelete and PostDelete hooks (internal/controller), listing an app's
// objects (internal/kube, internal/compare).
package teardown
