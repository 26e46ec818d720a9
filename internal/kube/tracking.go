package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TrackingMethod is how an object records the application that manages it.
type TrackingMethod string

// The tracking methods of Argo CD.
const (
	// TrackingAnnotation writes argocd.argoproj.io/tracking-id (the default).
	TrackingAnnotation TrackingMethod = "annotation"
	// TrackingLabel writes the app.kubernetes.io/instance label.
	TrackingLabel TrackingMethod = "label"
	// TrackingAnnotationAndLabel writes both and reads the annotation.
	TrackingAnnotationAndLabel TrackingMethod = "annotation+label"
)

// Tracking annotation and label.
const (
	AnnotationInstallationID = "argocd.argoproj.io/installation-id"
	AnnotationTrackingID     = "argocd.argoproj.io/tracking-id"
	LabelInstance            = "app.kubernetes.io/instance"
)

// Tracking marks and recognises the objects of one application.
type Tracking struct {
	Method  TrackingMethod
	AppName string
	// InstallationID, when set, is written to every object and objects
	// of another installation are never this app's (Argo CD's
	// installationID setting, for several instances on one cluster).
	InstallationID string
}

func (t Tracking) method() TrackingMethod {
	if t.Method == "" {
		return TrackingAnnotation
	}
	return t.Method
}

// ID returns obj's tracking id: <app>:<group>/<kind>:<namespace>/<name>.
func (t Tracking) ID(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return fmt.Sprintf("%s:%s/%s:%s/%s", t.AppName, gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())
}

// Set marks obj as managed by the application.
func (t Tracking) Set(obj *unstructured.Unstructured) {
	if t.InstallationID != "" {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationInstallationID] = t.InstallationID
		obj.SetAnnotations(annotations)
	}
	m := t.method()
	if m == TrackingAnnotation || m == TrackingAnnotationAndLabel {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationTrackingID] = t.ID(obj)
		obj.SetAnnotations(annotations)
	}
	if m == TrackingLabel || m == TrackingAnnotationAndLabel {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[LabelInstance] = t.AppName
		obj.SetLabels(labels)
	}
}

// Owner returns the application that obj's tracking names, "" when none.
// With annotation tracking, an id that names another object (a copy of a
// tracked object) is no owner.
func (t Tracking) Owner(obj *unstructured.Unstructured) string {
	// Read in place: GetAnnotations and GetLabels copy them all, for every
	// object of every comparison.
	if id, _, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", AnnotationInstallationID); id != t.InstallationID {
		return ""
	}
	if t.method() == TrackingLabel {
		instance, _, _ := unstructured.NestedString(obj.Object, "metadata", "labels", LabelInstance)
		return instance
	}
	id, ok, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", AnnotationTrackingID)
	if !ok {
		return ""
	}
	app, rest, ok := strings.Cut(id, ":")
	if !ok {
		return ""
	}
	gk, nsName, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	gvk := obj.GroupVersionKind()
	ns, name, _ := strings.Cut(nsName, "/")
	if gk != gvk.Group+"/"+gvk.Kind || name != obj.GetName() || (ns != obj.GetNamespace() && obj.GetNamespace() != "") {
		return ""
	}
	return app
}

// Tracks reports whether obj is managed by the application.
func (t Tracking) Tracks(obj *unstructured.Unstructured) bool {
	return t.AppName != "" && t.Owner(obj) == t.AppName
}

// NamedApp returns the app of installation installationID that an
// object's tracking names, read as loosely as routing an event needs: the
// app part of the tracking annotation (before its first colon) or,
// failing that, the instance label; "" for another installation's object.
// Tracks decides whether the object really is the app's.
func NamedApp(installationID string, annotations, labels map[string]string) string {
	if annotations[AnnotationInstallationID] != installationID {
		return ""
	}
	if id := annotations[AnnotationTrackingID]; id != "" {
		app, _, _ := strings.Cut(id, ":")
		return app
	}
	return labels[LabelInstance]
}
