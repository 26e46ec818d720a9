// Package kube owns cluster access for one destination cluster: a dynamic
// client and a RESTMapper that is refreshed when a CustomResourceDefinition
// appears, the four ways of writing an object (server-side apply with field
// manager "wavecd", client-side apply with the last-applied annotation,
// replace, and force: delete and recreate), server-side dry runs of each,
// deletion with a propagation policy, finalizer removal, list and watch, and
// the tracking of objects by application (annotation or label). The
// controllers that keep a cache of their own namespace (ApplicationSets,
// notifications) build and run it with NamespaceCache and RunWithCache.
//
// Errors about one object are [*ObjectError] values that name the operation
// and the object; the API server's error stays reachable with errors.Is and
// errors.As.
//
// The package does not decide what to apply or in which order (see
// internal/sync), nor compare objects (see internal/diff).
package kube
