// Package appclient owns reading and writing Argo CD Applications through the
// Kubernetes API, the way `argocd --core` does: no wavecd API server sits in
// between, the caller's kubeconfig decides what it may do.
//
// It holds the actions behind `wavecd app` (List, Get, Sync, Rollback, Wait,
// Create, Set, Delete), each a struct whose fields are the command's options
// and whose Run method does the work and returns data; printing stays in
// internal/cli; the API server runs the same actions for its users. The
// vocabulary they share with the controller (the refresh request, listing
// apps, a missing app) is internal/application's.
//
// A sync or rollback only writes the Application's `operation` field, as
// Argo CD's API server does; the controller runs the operation and reports
// progress in status.operationState. Nothing here renders manifests, diffs or
// touches the app's managed objects.
package appclient
