package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// credentialsCase is Secrets and the credentials read from them.
type credentialsCase struct {
	secrets []corev1.Secret
	want    Credentials
	// lookups maps repository URLs to the URL of the credentials For picks
	// ("" for none).
	lookups map[string]string
	wantErr string
}

func credentialsCases() map[string]credentialsCase {
	cluster := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: "argocd",
		Labels: map[string]string{SecretTypeLabel: "cluster"}}, StringData: map[string]string{"server": "https://k8s"}}
	unlabelled := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "argocd"}}
	fromData := repoSecret("data", false, nil)
	fromData.Data = map[string][]byte{"url": []byte("https://git.example.com/acme/a"), "username": []byte("bot"), "password": []byte("pw")}
	return map[string]credentialsCase{
		"no secrets": {},
		"only repository and repo-creds secrets, by name": {
			secrets: []corev1.Secret{
				cluster,
				repoSecret("b-repo", false, map[string]string{"url": "https://git.example.com/acme/seed", "bearerToken": "tok"}),
				unlabelled,
				repoSecret("a-tpl", true, map[string]string{"url": "https://git.example.com/acme", "username": "bot", "password": "pw"}),
			},
			want: Credentials{
				{URL: "https://git.example.com/acme", Username: "bot", Password: "pw", Prefix: true},
				{URL: "https://git.example.com/acme/seed", BearerToken: "tok"},
			},
			lookups: map[string]string{
				"https://git.example.com/acme/seed.git": "https://git.example.com/acme/seed",
				"https://git.example.com/acme/other":    "https://git.example.com/acme",
				"https://git.example.com/elsewhere/x":   "",
			},
		},
		"data and stringData": {
			secrets: []corev1.Secret{fromData},
			want:    Credentials{{URL: "https://git.example.com/acme/a", Username: "bot", Password: "pw"}},
		},
		"helm OCI registry fields": {
			secrets: []corev1.Secret{repoSecret("oci", false, map[string]string{"url": "oci://registry.example.com/charts", "type": "helm",
				"enableOCI": "true", "insecureOCIForceHttp": "true", "username": "robot", "password": "pw"})},
			want: Credentials{{URL: "oci://registry.example.com/charts", Type: "helm", EnableOCI: true, InsecureOCIForceHTTP: true,
				Username: "robot", Password: "pw"}},
		},
		"a broken secret is reported, the others kept": {
			secrets: []corev1.Secret{
				repoSecret("broken", false, map[string]string{"username": "bot"}),
				repoSecret("good", false, map[string]string{"url": "ssh://git@git.example.com/acme/seed", "sshPrivateKey": "KEY"}),
			},
			want:    Credentials{{URL: "ssh://git@git.example.com/acme/seed", SSHPrivateKey: "KEY"}},
			wantErr: "secret argocd/broken: field url is empty",
		},
		"one URL in two secrets: the first by name wins": {
			secrets: []corev1.Secret{
				repoSecret("z", false, map[string]string{"url": "https://git.example.com/acme/seed", "password": "second"}),
				repoSecret("a", false, map[string]string{"url": "https://git.example.com/acme/seed.git", "password": "first"}),
			},
			want: Credentials{
				{URL: "https://git.example.com/acme/seed.git", Password: "first"},
				{URL: "https://git.example.com/acme/seed", Password: "second"},
			},
			lookups: map[string]string{"https://git.example.com/acme/seed": "https://git.example.com/acme/seed.git"},
		},
	}
}

func TestCredentialsFromSecrets(t *testing.T) {
	for name, tc := range credentialsCases() {
		t.Run(name, func(t *testing.T) {
			got, err := CredentialsFromSecrets(tc.secrets)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
			for url, want := range tc.lookups {
				var gotURL string
				if c := got.For(url); c != nil {
					gotURL = c.URL
				}
				if gotURL != want {
					t.Errorf("For(%q) picked %q, want %q", url, gotURL, want)
				}
			}
		})
	}
}
