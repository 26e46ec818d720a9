package appset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/settings"
)

// Objects reads the ConfigMaps and Secrets of the set's namespace that a
// generator names (the plugin generator's); KubeObjects reads them from
// the API server.
type Objects interface {
	ConfigMapData(ctx context.Context, namespace, name string) (map[string]string, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
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

// Secret returns the Secret.
func (k KubeObjects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
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

// Secret returns the Secret name as the API server would store it
// (stringData over data).
func (s StaticObjects) Secret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	o := s.find("Secret", namespace, name)
	if o == nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, notFound("secrets", name))
	}
	var sec corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &sec); err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	sec.Data, sec.StringData = kube.SecretData(&sec), nil
	if sec.Namespace == "" {
		sec.Namespace = namespace
	}
	return &sec, nil
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

// FromSettings are what generators see offline from a settings file
// (`wavecd appset generate --settings`, a rehearsal's root): its cluster
// Secrets, with the in-cluster destination unless argocd-cm's
// cluster.inClusterEnabled is "false", and its ConfigMaps and Secrets. A
// nil s is the in-cluster destination alone. Clusters that read are
// returned beside the error of those that do not.
func FromSettings(s *settings.Settings) (cluster.Static, StaticObjects, error) {
	if s == nil {
		return cluster.Static{*cluster.InCluster()}, nil, nil
	}
	inCluster := s.Data(settings.ConfigMap)["cluster.inClusterEnabled"] != "false"
	list, err := cluster.FromObjects(s.Objects, inCluster)
	return cluster.Static(list), StaticObjects(s.Objects), err
}
