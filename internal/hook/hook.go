package hook

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotations and finalizers of hooks and waves.
const (
	// AnnotationHook lists an object's hook types.
	AnnotationHook = "argocd.argoproj.io/hook"
	// AnnotationDeletePolicy lists a hook's delete policies.
	AnnotationDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationSyncWave is an object's wave within its phase.
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationHelmHook lists a Helm hook's events.
	AnnotationHelmHook = "helm.sh/hook"
	// AnnotationHelmWeight is a Helm hook's weight, the wave when there is
	// no sync-wave.
	AnnotationHelmWeight = "helm.sh/hook-weight"
	// AnnotationHelmDeletePolicy lists a Helm hook's delete policies.
	AnnotationHelmDeletePolicy = "helm.sh/hook-delete-policy"
	// Finalizer keeps a hook until the sync that runs it has read its result.
	Finalizer = "argocd.argoproj.io/hook-finalizer"
)

// Type is a hook type: a sync phase the hook runs in, a deletion stage, or
// Skip.
type Type string

// The hook types Argo CD knows.
const (
	PreSync    Type = "PreSync"
	Sync       Type = "Sync"
	PostSync   Type = "PostSync"
	SyncFail   Type = "SyncFail"
	Skip       Type = "Skip"
	PreDelete  Type = "PreDelete"
	PostDelete Type = "PostDelete"
)

var argoTypes = []Type{PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete}

// helmTypes maps Helm's hook events onto Argo CD's types.
var helmTypes = map[string]Type{
	"pre-install":  PreSync,
	"pre-upgrade":  PreSync,
	"post-install": PostSync,
	"post-upgrade": PostSync,
	"pre-delete":   PreDelete,
	"post-delete":  PostDelete,
}

// helmCRDInstall is Helm's old CRD marker, carried in helm.sh/hook but not
// a hook.
const helmCRDInstall = "crd-install"

// Annotated is anything with annotations: an unstructured object, a typed
// one, an Application.
type Annotated interface {
	GetAnnotations() map[string]string
}

// Annotation returns obj's annotation key. An unstructured object's is
// read in place: its GetAnnotations copies every annotation, at each call,
// and a sync or comparison reads a handful of them for every object.
func Annotation(obj Annotated, key string) (string, bool) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		v, found, err := unstructured.NestedString(u.Object, "metadata", "annotations", key)
		return v, found && err == nil
	}
	v, ok := obj.GetAnnotations()[key]
	return v, ok
}

// annotationValue is Annotation's value alone.
func annotationValue(obj Annotated, key string) string {
	v, _ := Annotation(obj, key)
	return v
}

// Types returns the hook types obj declares, in annotation order: Argo CD's
// when it names any, else the Helm events Argo CD maps.
func Types(obj Annotated) []Type {
	var out []Type
	for _, v := range CSV(annotationValue(obj, AnnotationHook)) {
		if t := Type(v); slices.Contains(argoTypes, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, v := range CSV(annotationValue(obj, AnnotationHelmHook)) {
		if t, ok := helmTypes[v]; ok && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Has reports whether obj declares hook type t.
func Has(obj Annotated, t Type) bool { return slices.Contains(Types(obj), t) }

// IsSkipped reports whether obj is annotated Skip alone: it is not synced.
func IsSkipped(obj Annotated) bool {
	types := Types(obj)
	return len(types) == 1 && types[0] == Skip
}

// IsHook reports whether obj is a hook, as Argo CD decides it: hooks are not
// part of an application's desired state, whatever their types.
func IsHook(obj Annotated) bool {
	if _, ok := Annotation(obj, AnnotationHook); ok {
		return !IsSkipped(obj)
	}
	v, ok := Annotation(obj, AnnotationHelmHook)
	return ok && v != helmCRDInstall
}

// SyncPhases returns the sync phases a hook runs in, in phase order:
// PreSync, Sync, PostSync, SyncFail.
func SyncPhases(obj Annotated) []Type {
	types := Types(obj)
	var out []Type
	for _, t := range []Type{PreSync, Sync, PostSync, SyncFail} {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	return out
}

// DeletePolicy says when a hook is deleted.
type DeletePolicy string

// The hook delete policies.
const (
	// HookSucceeded deletes a hook that succeeded, once the sync ends.
	HookSucceeded DeletePolicy = "HookSucceeded"
	// HookFailed deletes a hook that failed, once the sync ends.
	HookFailed DeletePolicy = "HookFailed"
	// BeforeHookCreation deletes the hook of an earlier sync before the
	// hook is created again (the default).
	BeforeHookCreation DeletePolicy = "BeforeHookCreation"
)

var helmPolicies = map[string]DeletePolicy{
	"before-hook-creation": BeforeHookCreation,
	"hook-succeeded":       HookSucceeded,
	"hook-failed":          HookFailed,
}

// DeletePolicies returns a hook's delete policies, Argo CD's then Helm's;
// BeforeHookCreation when none is named.
func DeletePolicies(obj Annotated) []DeletePolicy {
	var out []DeletePolicy
	for _, v := range CSV(annotationValue(obj, AnnotationDeletePolicy)) {
		if p := DeletePolicy(v); slices.Contains([]DeletePolicy{HookSucceeded, HookFailed, BeforeHookCreation}, p) {
			out = append(out, p)
		}
	}
	for _, v := range CSV(annotationValue(obj, AnnotationHelmDeletePolicy)) {
		if p, ok := helmPolicies[v]; ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []DeletePolicy{BeforeHookCreation}
	}
	return out
}

// Wave returns obj's sync wave: argocd.argoproj.io/sync-wave, else
// helm.sh/hook-weight, else 0.
func Wave(obj Annotated) int {
	w, _ := DeclaredWave(obj)
	return w
}

// DeclaredWave is Wave, and whether obj declares its wave (an annotation
// of the two holds a number) rather than taking the default 0.
func DeclaredWave(obj Annotated) (int, bool) {
	if v, err := strconv.Atoi(annotationValue(obj, AnnotationSyncWave)); err == nil {
		return v, true
	}
	if v, err := strconv.Atoi(annotationValue(obj, AnnotationHelmWeight)); err == nil {
		return v, true
	}
	return 0, false
}

// CSV splits a comma-separated annotation value into its trimmed, non-empty
// parts, as Argo CD reads hook types, delete policies and sync options.
func CSV(value string) []string {
	var out []string
	for part := range strings.SplitSeq(value, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
