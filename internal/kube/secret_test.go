package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestSecretData(t *testing.T) {
	tests := map[string]struct {
		secret corev1.Secret
		want   map[string][]byte
	}{
		"data only":             {corev1.Secret{Data: map[string][]byte{"a": []byte("1")}}, map[string][]byte{"a": []byte("1")}},
		"stringData only":       {corev1.Secret{StringData: map[string]string{"a": "1"}}, map[string][]byte{"a": []byte("1")}},
		"stringData wins":       {corev1.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"a": "3"}}, map[string][]byte{"a": []byte("3"), "b": []byte("2")}},
		"neither: an empty map": {corev1.Secret{}, map[string][]byte{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.secret.DeepCopy()
			got := SecretData(in)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("SecretData (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.secret, *in); d != "" {
				t.Errorf("the Secret was changed:\n%s", d)
			}
		})
	}
}
