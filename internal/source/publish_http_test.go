package source

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPublishWithWriteCredentials pushes to a repository served by git's
// own http-backend behind basic auth: the repository-write Secret's
// credentials push, while the read credentials (another user) and none
// are refused, with no password in the error.
func TestPublishWithWriteCredentials(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "hydrator", "s3cr3t-push")
	url := srv.URL + "/repo.git"
	secret := func(name, kind, user, pass string) corev1.Secret {
		return corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name, Labels: map[string]string{SecretTypeLabel: kind}},
			StringData: map[string]string{"url": url, "username": user, "password": pass},
		}
	}
	secrets := []corev1.Secret{secret("read", SecretTypeRepo, "reader", "s3cr3t-read"), secret("write", SecretTypeRepoWrite, "hydrator", "s3cr3t-push")}
	read, err := CredentialsFromSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	write, err := WriteCredentialsFromSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 1 || len(write) != 1 {
		t.Fatalf("read credentials %v, write credentials %v: each kind reads its own Secrets", read, write)
	}
	if c := write.For(url); c == nil || c.Username != "hydrator" {
		t.Fatalf("write credentials for %s: %v", url, c)
	}
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir(), Credentials: read})
	opts := PublishOptions{Author: object.Signature{Name: "Argo CD", Email: "argo-cd@example.com"}}

	_, err = repos.OpenBranch(t.Context(), url, "env/dev", opts)
	if !errors.Is(err, transport.ErrAuthenticationRequired) && !errors.Is(err, transport.ErrAuthorizationFailed) {
		t.Errorf("with the read credentials: %v, want an authentication error", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("the error holds a password: %v", err)
	}
	opts.Credential = write.For(url)
	b, err := repos.OpenBranch(t.Context(), url, "env/dev", opts)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := b.Commit(t.Context(), map[string][]byte{"dev/manifest.yaml": []byte("kind: ConfigMap\n")}, "hydrate")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, repo.bare, "rev-parse", "env/dev"); got != sha {
		t.Errorf("env/dev on the server at %s, want %s", got, sha)
	}
	if got := runGit(t, repo.bare, "show", "env/dev:dev/manifest.yaml"); got != "kind: ConfigMap" {
		t.Errorf("manifest.yaml on the server: %q", got)
	}
}
