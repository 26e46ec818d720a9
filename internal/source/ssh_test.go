package source

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// repoSecret is an Argo CD repository Secret (repo-creds when prefix).
func repoSecret(name string, prefix bool, data map[string]string) corev1.Secret {
	kind := SecretTypeRepo
	if prefix {
		kind = SecretTypeRepoCreds
	}
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Labels: map[string]string{SecretTypeLabel: kind}},
		StringData: data,
	}
}

func TestSSHWithKeyFromSecret(t *testing.T) {
	repo := newTestRepo(t)
	client, other := newSSHKey(t), newSSHKey(t)
	srv := serveSSH(t, filepath.Dir(repo.bare), client.public)
	url := "ssh://git@" + srv.Addr + "/repo.git"
	// Without known hosts go-git reads these files; none exists.
	t.Setenv("SSH_KNOWN_HOSTS", filepath.Join(t.TempDir(), "known_hosts"))
	sshSecret := func(key, insecure string) corev1.Secret {
		return repoSecret("repo", false, map[string]string{"url": url, "sshPrivateKey": key, "insecure": insecure})
	}
	trusted := srv.KnownHostsLine(srv.HostKey.public)
	mismatch := srv.KnownHostsLine(other.public)
	tests := map[string]struct {
		secret     corev1.Secret
		knownHosts string
		wantErr    []string // every one must be in the error
	}{
		"key from the secret, insecure":           {secret: sshSecret(client.private, "true")},
		"key from the secret, known host":         {secret: sshSecret(client.private, "false"), knownHosts: trusted},
		"key from a repo-creds template":          {secret: repoSecret("tpl", true, map[string]string{"url": "ssh://git@" + srv.Addr, "sshPrivateKey": client.private}), knownHosts: trusted},
		"known hosts mismatch, insecure":          {secret: sshSecret(client.private, "true"), knownHosts: mismatch},
		"wrong key":                               {secret: sshSecret(other.private, "true"), wantErr: []string{url, "unable to authenticate", "check the repository credentials"}},
		"known hosts mismatch":                    {secret: sshSecret(client.private, ""), knownHosts: mismatch, wantErr: []string{url, "key mismatch", "differs from the known hosts"}},
		"host not in the known hosts":             {secret: sshSecret(client.private, ""), knownHosts: "[127.0.0.1]:1 " + mismatch[strings.Index(mismatch, " ")+1:], wantErr: []string{url, "not in the known hosts"}},
		"no known hosts, not insecure":            {secret: sshSecret(client.private, ""), wantErr: []string{url, "no SSH known hosts are configured"}},
		"known hosts mismatch, wrong key as well": {secret: sshSecret(other.private, ""), knownHosts: mismatch, wantErr: []string{url, "differs from the known hosts"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			creds, err := CredentialsFromSecrets([]corev1.Secret{tc.secret})
			if err != nil {
				t.Fatal(err)
			}
			repos := NewRepos(ReposOptions{CacheDir: t.TempDir(), Credentials: creds, KnownHosts: tc.knownHosts})
			tree, err := repos.Checkout(t.Context(), url, "main")
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got, err := tree.ReadFile("app/cm.yaml"); err != nil || string(got) != "rev: second\n" {
					t.Errorf("app/cm.yaml = %q, %v; want main's", got, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v\nwant it to contain %q", err, want)
				}
			}
			assertNoKeyMaterial(t, err.Error(), client.private, other.private)
		})
	}
}

// assertNoKeyMaterial fails when msg quotes a line of a private key.
func assertNoKeyMaterial(t *testing.T, msg string, keys ...string) {
	t.Helper()
	for _, key := range keys {
		for line := range strings.Lines(key) {
			line = strings.TrimSpace(line)
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") && strings.Contains(msg, line) {
				t.Errorf("error quotes the private key: %s", msg)
			}
		}
	}
}

func TestCredentialsAndKnownHostsCanChange(t *testing.T) {
	repo := newTestRepo(t)
	client := newSSHKey(t)
	srv := serveSSH(t, filepath.Dir(repo.bare), client.public)
	url := "ssh://git@" + srv.Addr + "/repo.git"
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir(), KnownHosts: "not a known hosts line"})
	if _, err := repos.Resolve(t.Context(), url, "main"); err == nil || !strings.Contains(err.Error(), "SSH known hosts") {
		t.Fatalf("error = %v, want the known hosts parse error", err)
	}
	if err := repos.SetKnownHosts("still [not valid"); err == nil {
		t.Error("SetKnownHosts accepted a bad line")
	}
	if err := repos.SetKnownHosts(srv.KnownHostsLine(srv.HostKey.public)); err != nil {
		t.Fatal(err)
	}
	other := newSSHKey(t)
	repos.SetCredentials(Credentials{{URL: url, SSHPrivateKey: other.private}})
	if _, err := repos.Resolve(t.Context(), url, "main"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("error = %v, want an authentication error", err)
	}
	repos.SetCredentials(Credentials{{URL: url, SSHPrivateKey: client.private}})
	got, err := repos.Resolve(t.Context(), url, "main")
	if err != nil {
		t.Fatal(err)
	}
	if got != repo.second {
		t.Errorf("main = %s, want %s", got, repo.second)
	}
}
