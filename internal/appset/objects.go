package appset

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Objects reads the ConfigMaps and Secrets of the set's namespace that a
// generator names (the plugin generator's); KubeObjects reads them from
// the API server.
type Objects interface {
	ConfigMapData(ctx context.Context, namespace, name string) (map[string]string, error)
	SecretData(ctx context.Context, namespace, name string) (map[string]string, error)
}

// KubeObjects reads ConfigMaps and Secrets through a Kubernetes reader.
type KubeObjects struct{ Reader client.Reader }

// ConfigMapData returns the ConfigMap's data.
func (k KubeObjects) ConfigMapData(ctx context.Context, namespace, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", namespace, name, err)
	}
	return cm.Data, nil
}

// SecretData returns the Secret's data as strings.
func (k KubeObjects) SecretData(ctx context.Context, namespace, name string) (map[string]string, error) {
	s := &corev1.Secret{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	out := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}

// StaticObjects are ConfigMaps and Secrets read once, from a settings
// file, for generating offline (`wavecd appset generate --settings`, a
// rehearsal's root). Objects of another namespace are not seen; an object
// without a namespace is in every one.
type StaticObjects []*unstructured.Unstructured

// ConfigMapData returns the data of the ConfigMap name.
func (s StaticObjects) ConfigMapData(_ context.Context, namespace, name string) (map[string]string, error) {
	o := s.find("ConfigMap", namespace, name)
	if o == nil {
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", namespace, name, notFound("configmaps", name))
	}
	data, _, err := unstructured.NestedStringMap(o.Object, "data")
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", namespace, name, err)
	}
	return data, nil
}

// SecretData returns the data (decoded) and stringData of the Secret
// name, stringData winning as the API server makes it.
func (s StaticObjects) SecretData(_ context.Context, namespace, name string) (map[string]string, error) {
	o := s.find("Secret", namespace, name)
	if o == nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, notFound("secrets", name))
	}
	encoded, _, err := unstructured.NestedStringMap(o.Object, "data")
	if err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	out := map[string]string{}
	for k, v := range encoded {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("read Secret %s/%s: data.%s: %w", namespace, name, k, err)
		}
		out[k] = string(b)
	}
	plain, _, err := unstructured.NestedStringMap(o.Object, "stringData")
	if err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	for k, v := range plain {
		out[k] = v
	}
	return out, nil
}

func (s StaticObjects) find(kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range s {
		if o.GetKind() == kind && o.GroupVersionKind().Group == "" && o.GetName() == name &&
			(o.GetNamespace() == "" || o.GetNamespace() == namespace) {
			return o
		}
	}
	return nil
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}
