package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxPayloadSizeKey is the argocd-cm key that caps a webhook body, in MB
// (50 when absent), as in Argo CD.
const MaxPayloadSizeKey = "webhook.maxPayloadSizeMB"

// MaxWebhookBytes reads argocd-cm's webhook.maxPayloadSizeMB in namespace:
// the webhook's body cap in bytes, DefaultMaxWebhookBytes when the
// ConfigMap or the key is absent. Argo CD reads it when its server starts;
// so does wavecd.
func MaxWebhookBytes(ctx context.Context, r client.Reader, namespace string) (int64, error) {
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "argocd-cm"}, &cm)
	if apierrors.IsNotFound(err) {
		return DefaultMaxWebhookBytes, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read ConfigMap %s/argocd-cm: %w", namespace, err)
	}
	v := strings.TrimSpace(cm.Data[MaxPayloadSizeKey])
	if v == "" {
		return DefaultMaxWebhookBytes, nil
	}
	mb, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mb <= 0 || mb > 1<<20 {
		return 0, fmt.Errorf("argocd-cm key %s: %q is not a positive number of megabytes", MaxPayloadSizeKey, v)
	}
	return mb << 20, nil
}

// Settings Secret names and keys, as in Argo CD.
const (
	SettingsSecretName = "argocd-secret"
	GitHubSecretKey    = "webhook.github.secret"
	// PartOfLabel must be "argocd" on a Secret that a `$name:key` value
	// points into.
	PartOfLabel = "app.kubernetes.io/part-of"
)

// SettingsSecret reads webhook secrets from Secret argocd-secret in
// Namespace. A value `$other:key` is read from key of Secret `other`, which
// must carry the label app.kubernetes.io/part-of=argocd, as in Argo CD.
type SettingsSecret struct {
	Reader    client.Reader
	Namespace string
}

// GitHubWebhookSecret returns webhook.github.secret, or "" when the Secret
// or the key is absent.
func (s SettingsSecret) GitHubWebhookSecret(ctx context.Context) (string, error) {
	val, err := s.read(ctx, SettingsSecretName, GitHubSecretKey, false)
	if err != nil || !strings.HasPrefix(val, "$") {
		return val, err
	}
	name, key, ok := strings.Cut(val[1:], ":")
	if !ok || name == "" || key == "" {
		return "", fmt.Errorf("%s in secret %s: a reference must look like $secret-name:key", GitHubSecretKey, SettingsSecretName)
	}
	return s.read(ctx, name, key, true)
}

func (s SettingsSecret) read(ctx context.Context, name, key string, referenced bool) (string, error) {
	var sec corev1.Secret
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &sec)
	switch {
	case apierrors.IsNotFound(err) && !referenced:
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read Secret %s/%s: %w", s.Namespace, name, err)
	case referenced && sec.Labels[PartOfLabel] != "argocd":
		return "", fmt.Errorf("secret %s/%s is referenced by %s but lacks the label %s=argocd", s.Namespace, name, GitHubSecretKey, PartOfLabel)
	}
	if b, ok := sec.Data[key]; ok {
		return string(b), nil
	}
	if referenced {
		return "", fmt.Errorf("secret %s/%s has no key %q", s.Namespace, name, key)
	}
	return "", nil
}
