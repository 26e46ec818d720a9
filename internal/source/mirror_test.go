package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMirrors(t *testing.T) {
	m, err := ParseMirrorsConfig("https://github.com/acme/seed.git: /srv/seed\nhttps://charts.example.com/: /srv/charts\n")
	if err != nil {
		t.Fatal(err)
	}
	url, path, err := ParseMirror("https://github.com/acme/other=/srv/other")
	if err != nil {
		t.Fatal(err)
	}
	m.Add(url, path)
	tests := map[string]struct {
		url, want string
		found     bool
	}{
		"exact":                {url: "https://github.com/acme/seed.git", want: "/srv/seed", found: true},
		"without .git":         {url: "https://github.com/acme/seed", want: "/srv/seed", found: true},
		"host case and slash":  {url: "https://GITHUB.com/acme/seed/", want: "/srv/seed", found: true},
		"user info is ignored": {url: "https://bot:token@github.com/acme/seed", want: "/srv/seed", found: true},
		"from a flag":          {url: "https://github.com/acme/other.git", want: "/srv/other", found: true},
		"helm repository":      {url: "https://charts.example.com", want: "/srv/charts", found: true},
		"unknown":              {url: "https://github.com/acme/nope"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := m.Lookup(tc.url)
			if diff := cmp.Diff([]any{tc.want, tc.found}, []any{got, ok}); diff != "" {
				t.Errorf("Lookup (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"no-equals", "=path", "url="} {
		if _, _, err := ParseMirror(bad); err == nil {
			t.Errorf("ParseMirror(%q) gave no error", bad)
		}
	}
}

func TestCredentialFromSecret(t *testing.T) {
	secret := func(kind string, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo", Namespace: "argocd", Labels: map[string]string{SecretTypeLabel: kind}}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	tests := map[string]struct {
		secret  *corev1.Secret
		want    RepoCredential
		wantErr string
	}{
		"https token": {
			secret: secret("repository", map[string]string{"url": "https://github.com/acme/seed", "username": "bot", "password": "tok"}),
			want:   RepoCredential{URL: "https://github.com/acme/seed", Username: "bot", Password: "tok"},
		},
		"ssh key template": {
			secret: secret("repo-creds", map[string]string{"url": "git@github.com:acme", "sshPrivateKey": "KEY", "insecure": "true"}),
			want:   RepoCredential{URL: "git@github.com:acme", SSHPrivateKey: "KEY", Insecure: true, Prefix: true},
		},
		"not a repository secret": {secret: secret("cluster", map[string]string{"url": "x"}), wantErr: `label argocd.argoproj.io/secret-type is "cluster"`},
		"no url":                  {secret: secret("repository", nil), wantErr: "field url is empty"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := CredentialFromSecret(tc.secret)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
			if strings.Contains(got.String(), "tok") || strings.Contains(got.String(), "KEY") {
				t.Errorf("String() shows a secret: %s", got)
			}
		})
	}
	if _, err := (&RepoCredential{URL: "git@x:y", SSHPrivateKey: "not a key"}).gitAuth("git@x:y", nil); err == nil || strings.Contains(err.Error(), "not a key") {
		t.Errorf("bad SSH key error = %v, want an error that does not quote the key", err)
	}
}
