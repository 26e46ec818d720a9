package kube

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// crdGVK is the kind of CustomResourceDefinitions.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// IsCRD reports whether obj is a CustomResourceDefinition.
func IsCRD(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == crdGVK.GroupKind()
}

// CRDGroupKind returns the group and kind a CustomResourceDefinition defines.
func CRDGroupKind(crd *unstructured.Unstructured) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	return schema.GroupKind{Group: group, Kind: kind}, group != "" && kind != ""
}

// WaitEstablished waits until the CustomResourceDefinition name is
// established and its kind is in the API server's discovery (which can
// lag behind the Established condition), refreshing the RESTMapper so
// the kind maps.
func (c *Cluster) WaitEstablished(ctx context.Context, name string, timeout time.Duration) error {
	ref := Ref{GVK: crdGVK, Name: name}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var gk schema.GroupKind
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := c.Get(ctx, ref)
		if err != nil {
			return false, err
		}
		gk, _ = CRDGroupKind(crd)
		return crdEstablished(crd), nil
	})
	if err != nil {
		return objectError("wait established", ref, fmt.Errorf("not established: %w", err))
	}
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		// Mapping refreshes discovery at most every 500 ms, however many
		// CRDs of a wave wait at once.
		_, err := c.Mapping(schema.GroupVersionKind{Group: gk.Group, Kind: gk.Kind})
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return objectError("wait established", ref, fmt.Errorf("kind %s not served: %w", gk, err))
	}
	return nil
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// kubernetesGroups are API groups served by Kubernetes itself; objects of
// other groups are custom resources.
var kubernetesGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"apiextensions.k8s.io": true, "apiregistration.k8s.io": true, "admissionregistration.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "node.k8s.io": true, "scheduling.k8s.io": true,
	"certificates.k8s.io": true, "authentication.k8s.io": true, "authorization.k8s.io": true,
	"resource.k8s.io": true, "internal.apiserver.k8s.io": true, "storagemigration.k8s.io": true,
}

// IsCustomResource reports whether objects of gk are custom resources:
// their API group is not one Kubernetes serves itself.
func IsCustomResource(gk schema.GroupKind) bool { return !kubernetesGroups[gk.Group] }

// HasObjects reports whether any object of kind gk exists, in any
// namespace; false for a kind the API server does not serve.
func (c *Cluster) HasObjects(ctx context.Context, gk schema.GroupKind) (bool, error) {
	m, err := c.Mapping(gk.WithVersion(""))
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("map %s: %w", gk, err)
	}
	list, err := c.dynamic.Resource(m.Resource).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", gk, err)
	}
	return len(list.Items) > 0, nil
}
