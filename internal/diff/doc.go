// Package diff owns the comparison of a desired object with its live
// counterpart: the server-side diff (the object the API server predicts for
// an apply, by dry run, compared with the live object), normalization
// (managedFields, resourceVersion, uid, generation, creationTimestamp,
// status and the last-applied annotation removed), Argo CD's
// ignoreDifferences (jsonPointers, jqPathExpressions, managedFieldsManagers)
// and RespectIgnoreDifferences (ignored fields keep their live values when
// applying).
//
// A server-side diff tells the truth where a client-side one does not: a
// key removed from a ConfigMap in Git is removed by the apply the dry run
// predicts, so the object is OutOfSync.
//
// The package does not read the cluster itself: a [Predictor] (the sync
// engine's dry-run apply) does. It does not decide what to apply.
package diff
