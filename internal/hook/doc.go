// Package hook owns Argo CD's vocabulary for resource hooks and sync waves
// on any Kubernetes object, so that every package reads these annotations
// with one meaning:
//
//   - which object is a hook: one with argocd.argoproj.io/hook (unless its
//     only value is Skip), or with helm.sh/hook (unless it is Helm's
//     crd-install, which is not a hook);
//   - the hook types it declares: Argo CD's values (PreSync, Sync, PostSync,
//     SyncFail, PreDelete, PostDelete, Skip; unknown values are ignored),
//     else the Helm ones Argo CD maps (pre-install and pre-upgrade to
//     PreSync, post-install and post-upgrade to PostSync, pre-delete to
//     PreDelete, post-delete to PostDelete);
//   - its delete policies: argocd.argoproj.io/hook-delete-policy and
//     helm.sh/hook-delete-policy together, BeforeHookCreation when neither
//     names one;
//   - an object's sync wave: argocd.argoproj.io/sync-wave, else
//     helm.sh/hook-weight, else 0. As in Argo CD, a value that is not an
//     integer (spaces included) counts as absent.
//
// The package is pure: it reads annotations and nothing else. Running hooks
// is internal/sync's job; leaving them out of sync status and health is
// internal/controller's and internal/health's.
package hook
