package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/settings"
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
	SettingsSecretName = settings.Secret
	GitHubSecretKey    = "webhook.github.secret"
	// PartOfLabel must be "argocd" on a Secret that a `$name:key` value
	// points into.
	PartOfLabel = settings.PartOfLabel
)

// SettingsSecret reads webhook secrets from Secret argocd-secret in
// Namespace. A value `$other:key` is read from key of Secret `other`, which
// must carry the label app.kubernetes.io/part-of=argocd, as in Argo CD.
type SettingsSecret struct {
	Reader    client.Reader
	Namespace string
}

// GitHubWebhookSecret returns webhook.github.secret, or "" when the Secret
// or the key is absent; a `$` reference is read where it points
// (settings.SecretRef).
func (s SettingsSecret) GitHubWebhookSecret(ctx context.Context) (string, error) {
	var sec corev1.Secret
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: SettingsSecretName}, &sec)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read Secret %s/%s: %w", s.Namespace, SettingsSecretName, err)
	}
	val := string(sec.Data[GitHubSecretKey])
	ref, isRef, err := settings.ParseSecretRef(val)
	if !isRef {
		return val, nil
	}
	if err != nil {
		return "", fmt.Errorf("%s in secret %s: %w", GitHubSecretKey, SettingsSecretName, err)
	}
	if ref.Secret != SettingsSecretName {
		sec = corev1.Secret{}
		if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: ref.Secret}, &sec); err != nil {
			return "", fmt.Errorf("%s in secret %s: read Secret %s/%s: %w", GitHubSecretKey, SettingsSecretName, s.Namespace, ref.Secret, err)
		}
	}
	v, err := ref.Value(&sec)
	if err != nil {
		return "", fmt.Errorf("%s in secret %s: %w", GitHubSecretKey, SettingsSecretName, err)
	}
	return v, nil
}
