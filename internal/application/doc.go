// Package application owns the vocabulary of an Argo CD Application that
// wavecd's parts share beyond its API type (api/v1alpha1): the refresh
// request (the argocd.argoproj.io/refresh annotation, set over the
// Kubernetes API by AnnotationRefresher), listing the apps of some
// namespaces (Lister), where an installation's apps live and how they are
// named (Namespaces: Argo CD's apps in any namespace, instance and
// qualified names, a project's sourceNamespaces), a missing app (NotFoundError), the app as an
// unstructured object (ToUnstructured), references to the
// resources an app manages (IsApplication), wavecd's wavecd.io/depends-on,
// conditions, the objects a local sync carries in
// operation.sync.manifests (DecodeManifests), and the progress of a running sync as
// status.operationState.wavecdState records it (SyncProgress, the one
// documented view of that field).
//
// The controller, the API server, the CLI's actions (internal/appclient)
// and the rehearsal read and write Applications in these terms, so none of
// them depends on another for them.
//
// What the package does not own: the actions behind `wavecd app`
// (internal/appclient), reconciling (internal/controller), the sync
// engine's state (internal/sync).
package application
