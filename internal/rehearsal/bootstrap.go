package rehearsal

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/notify"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

// fieldOwner is the server-side apply field manager of what up applies.
const fieldOwner = "wavecd-up"

// readSettings reads a settings file: ConfigMaps and Secrets such as
// argocd-cm and argocd-secret, or an argo-cd Helm chart values file.
func readSettings(path, namespace string) (*settings.Settings, error) {
	return settings.Load(path, settings.Options{Namespace: namespace})
}

// bootstrap puts what the controller needs into the cluster: CRDs, the
// namespace, settings, and the root manifest.
type bootstrap struct {
	cfg       *rest.Config
	client    client.Client
	namespace string
}

func newBootstrap(cfg *rest.Config, namespace string) (*bootstrap, error) {
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	return &bootstrap{cfg: cfg, client: c, namespace: namespace}, nil
}

// prepare installs the CRDs, creates the namespace and applies the
// settings objects, with the rehearsal's mirrors in argocd-cm's
// wavecd.mirrors: what the controller needs before any Application, and
// what lets any wavecd command against this cluster (app diff, a
// controller started by hand) read the repositories the rehearsal serves.
func (b *bootstrap) prepare(ctx context.Context, s *settings.Settings, mirrors source.Mirrors) error {
	if err := b.installCRDs(ctx); err != nil {
		return err
	}
	if err := b.ensureNamespace(ctx); err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	if s != nil {
		objs = s.Objects
	}
	objs, err := withMirrors(objs, mirrors, b.namespace)
	if err != nil {
		return err
	}
	if objs, err = withNotificationCatalog(objs); err != nil {
		return err
	}
	return b.applySettings(ctx, objs)
}

// withNotificationCatalog returns settings whose argocd-notifications-cm,
// if they have one, holds the notification catalog's triggers and
// templates it does not define itself, as the Helm chart installs them.
func withNotificationCatalog(settings []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := slices.Clone(settings)
	for i, o := range out {
		if o.GetKind() != "ConfigMap" || o.GetName() != notify.ConfigMapName {
			continue
		}
		cm := o.DeepCopy()
		data, _, err := unstructured.NestedStringMap(cm.Object, "data")
		if err != nil {
			return nil, fmt.Errorf("settings: %s: %w", notify.ConfigMapName, err)
		}
		if data, err = notify.WithCatalog(data); err != nil {
			return nil, err
		}
		if err := unstructured.SetNestedStringMap(cm.Object, data, "data"); err != nil {
			return nil, err
		}
		out[i] = cm
	}
	return out, nil
}

// withMirrors returns settings with mirrors added to argocd-cm's
// wavecd.mirrors (entries the file sets itself win), creating an argocd-cm
// with only that key when the settings have none.
func withMirrors(settings []*unstructured.Unstructured, mirrors source.Mirrors, namespace string) ([]*unstructured.Unstructured, error) {
	if len(mirrors) == 0 {
		return settings, nil
	}
	out := slices.Clone(settings)
	i := slices.IndexFunc(out, func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "ConfigMap" && o.GetName() == controller.SettingsConfigMap
	})
	if i < 0 {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(namespace)
		cm.SetName(controller.SettingsConfigMap)
		out, i = append(out, cm), len(out)
	}
	cm := out[i].DeepCopy()
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if data == nil {
		data = map[string]string{}
	}
	merged := source.Mirrors{}
	maps.Copy(merged, mirrors)
	if v := data[source.MirrorsConfigKey]; v != "" {
		own, err := source.ParseMirrorsConfig(v)
		if err != nil {
			return nil, fmt.Errorf("settings: %w", err)
		}
		maps.Copy(merged, own)
	}
	text, err := yaml.Marshal(map[string]string(merged))
	if err != nil {
		return nil, err
	}
	data[source.MirrorsConfigKey] = string(text)
	if err := unstructured.SetNestedStringMap(cm.Object, data, "data"); err != nil {
		return nil, err
	}
	out[i] = cm
	return out, nil
}

func (b *bootstrap) installCRDs(ctx context.Context) error {
	ext, err := apiextensions.NewForConfig(b.cfg)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	_, err = install.InstallCRDs(ctx, ext, install.CRDOptions{Timeout: time.Minute})
	return err
}

func (b *bootstrap) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.namespace}}
	if err := b.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", b.namespace, err)
	}
	return nil
}

// applySettings replaces each settings object with the one given (keys
// left out of the file do not survive from an earlier run). With no
// objects it deletes argocd-cm, so a reused cluster keeps no override
// (prepare always gives it one with the rehearsal's mirrors); the
// notification settings an earlier run left go unless this run has them.
func (b *bootstrap) applySettings(ctx context.Context, objs []*unstructured.Unstructured) error {
	given := map[string]bool{}
	for _, o := range objs {
		given[o.GetKind()+"/"+o.GetName()] = true
	}
	stale := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: notify.ConfigMapName}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: notify.SecretName}},
	}
	if len(objs) == 0 {
		stale = append(stale, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: controller.SettingsConfigMap}})
	}
	for _, o := range stale {
		kind := "ConfigMap"
		if _, ok := o.(*corev1.Secret); ok {
			kind = "Secret"
		}
		if given[kind+"/"+o.GetName()] {
			continue
		}
		if err := b.client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s left by an earlier run: %w", o.GetName(), err)
		}
	}
	for _, o := range objs {
		if err := b.replace(ctx, o.DeepCopy()); err != nil {
			return err
		}
	}
	return nil
}

func (b *bootstrap) replace(ctx context.Context, o *unstructured.Unstructured) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	err := b.client.Get(ctx, client.ObjectKeyFromObject(o), live)
	switch {
	case apierrors.IsNotFound(err):
		err = b.client.Create(ctx, o)
	case err == nil:
		o.SetResourceVersion(live.GetResourceVersion())
		err = b.client.Update(ctx, o)
	}
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

// refreshApps asks for a refresh of every Application already there (a
// reused cluster), so their status reflects this run's repository and
// settings, and returns how many there are.
func (b *bootstrap) refreshApps(ctx context.Context) (int, error) {
	apps := &v1alpha1.ApplicationList{}
	if err := b.client.List(ctx, apps, client.InNamespace(b.namespace)); err != nil {
		return 0, fmt.Errorf("list applications: %w", err)
	}
	r := application.AnnotationRefresher{Client: b.client}
	for _, a := range apps.Items {
		if err := r.Refresh(ctx, a.Namespace, a.Name, application.RefreshNormal); err != nil {
			return 0, err
		}
	}
	return len(apps.Items), nil
}

// applyRoot applies the root manifest with server-side apply.
func (b *bootstrap) applyRoot(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		err := b.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.FieldOwner(fieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
