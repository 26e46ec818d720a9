package settings

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PartOfLabel must be "argocd" on a Secret other than argocd-secret that a
// setting references, as Argo CD requires.
const PartOfLabel = "app.kubernetes.io/part-of"

// SecretRef is a setting's `$` reference into a Secret, as Argo CD users
// write them: `$key` is a key of argocd-secret, `$name:key` a key of
// Secret name, which must carry the label app.kubernetes.io/part-of:
// argocd.
type SecretRef struct {
	Secret, Key string
}

// ParseSecretRef reads a setting's value: ok is false for a plain value
// (no leading `$`), and err is set for a `$` value that names no key.
func ParseSecretRef(v string) (ref SecretRef, ok bool, err error) {
	rest, ok := strings.CutPrefix(v, "$")
	if !ok {
		return SecretRef{}, false, nil
	}
	ref = SecretRef{Secret: Secret, Key: rest}
	if name, key, found := strings.Cut(rest, ":"); found {
		ref = SecretRef{Secret: name, Key: key}
	}
	if ref.Secret == "" || ref.Key == "" {
		return SecretRef{}, true, fmt.Errorf("%q is not a reference of the form $key or $secret-name:key", v)
	}
	return ref, true, nil
}

// Value reads the referenced key from sec, the Secret the reference names
// (read by the caller): a Secret other than argocd-secret must carry the
// part-of label, and the key must be there.
func (r SecretRef) Value(sec *corev1.Secret) (string, error) {
	if r.Secret != Secret && sec.Labels[PartOfLabel] != "argocd" {
		return "", fmt.Errorf("secret %s/%s lacks the label %s=argocd that a Secret a setting references must carry", sec.Namespace, sec.Name, PartOfLabel)
	}
	return r.Read(sec)
}

// Read reads the referenced key from sec without the label rule: for the
// references Argo CD reads from any Secret of its namespace (the
// ApplicationSet plugin generator's token).
func (r SecretRef) Read(sec *corev1.Secret) (string, error) {
	if v, ok := sec.Data[r.Key]; ok {
		return string(v), nil
	}
	if v, ok := sec.StringData[r.Key]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s/%s has no key %q", sec.Namespace, sec.Name, r.Key)
}
