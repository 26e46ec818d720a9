package settings

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSecretRef(t *testing.T) {
	settings := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: Secret},
		Data: map[string][]byte{"webhook.github.secret": []byte("gh"), "oidc.clientSecret": []byte("oidc")}}
	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "idp", Labels: map[string]string{PartOfLabel: "argocd"}},
		Data: map[string][]byte{"clientSecret": []byte("from-idp")}}
	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "other"},
		Data: map[string][]byte{"token": []byte("t")}}
	secrets := map[string]*corev1.Secret{Secret: settings, "idp": labelled, "other": unlabelled}
	tests := map[string]struct {
		value, want, wantErr string
		plain                bool
	}{
		"a plain value":               {value: "plain", plain: true},
		"a key of argocd-secret":      {value: "$oidc.clientSecret", want: "oidc"},
		"argocd-secret by name":       {value: "$argocd-secret:webhook.github.secret", want: "gh"},
		"a labelled Secret":           {value: "$idp:clientSecret", want: "from-idp"},
		"a Secret without the label":  {value: "$other:token", wantErr: `secret argocd/other lacks the label app.kubernetes.io/part-of=argocd that a Secret a setting references must carry`},
		"a missing key":               {value: "$idp:nope", wantErr: `secret argocd/idp has no key "nope"`},
		"a lone dollar":               {value: "$", wantErr: `"$" is not a reference of the form $key or $secret-name:key`},
		"a Secret name without a key": {value: "$idp:", wantErr: `"$idp:" is not a reference of the form $key or $secret-name:key`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ref, ok, err := ParseSecretRef(tc.value)
			if ok == tc.plain {
				t.Fatalf("ParseSecretRef(%q): ok %v", tc.value, ok)
			}
			var got string
			if err == nil && ok {
				got, err = ref.Value(secrets[ref.Secret])
			}
			if gotErr := errString(err); gotErr != tc.wantErr || got != tc.want {
				t.Errorf("%q: %q, error %q; want %q, error %q", tc.value, got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSecretRefRead: Read takes any Secret the reference names, without
// the label rule (Argo CD's plugin generator token).
func TestSecretRefRead(t *testing.T) {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "other"}, Data: map[string][]byte{"token": []byte("t")}}
	ref, _, _ := ParseSecretRef("$other:token")
	if v, err := ref.Read(sec); err != nil || v != "t" {
		t.Errorf("Read: %q, %v", v, err)
	}
	if _, err := ref.Value(sec); err == nil {
		t.Error("Value read a Secret without the part-of label")
	}
}
