package source

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	corev1 "k8s.io/api/core/v1"
)

// Argo CD's labels for repository Secrets.
const (
	SecretTypeLabel     = "argocd.argoproj.io/secret-type"
	SecretTypeRepo      = "repository"
	SecretTypeRepoCreds = "repo-creds"
	// SecretTypeRepoWrite and SecretTypeRepoWriteCreds are Argo CD's
	// credentials for pushing (the source hydrator's), of one repository
	// and of every repository under a URL prefix.
	SecretTypeRepoWrite      = "repository-write"
	SecretTypeRepoWriteCreds = "repo-write-creds"
)

// RepoCredential holds the credentials of one repository (or, for a
// repo-creds template, of every repository under a URL prefix). Its String
// method never prints a secret.
type RepoCredential struct {
	URL           string
	Type          string // "git" (default) or "helm"
	Username      string
	Password      string
	BearerToken   string
	SSHPrivateKey string
	// Insecure skips TLS verification (HTTPS) or the host key check (SSH).
	Insecure  bool
	EnableOCI bool
	// InsecureOCIForceHTTP talks plain HTTP to an OCI registry.
	InsecureOCIForceHTTP bool
	// Prefix is true for repo-creds Secrets, which match by URL prefix.
	Prefix bool
}

func (c RepoCredential) String() string {
	return fmt.Sprintf("credentials for %s", RedactURL(c.URL))
}

// CredentialFromSecret reads an Argo CD repository Secret: repository,
// repo-creds, repository-write or repo-write-creds.
func CredentialFromSecret(s *corev1.Secret) (RepoCredential, error) {
	kind := s.Labels[SecretTypeLabel]
	kinds := []string{SecretTypeRepo, SecretTypeRepoCreds, SecretTypeRepoWrite, SecretTypeRepoWriteCreds}
	if !slices.Contains(kinds, kind) {
		return RepoCredential{}, fmt.Errorf("secret %s/%s: label %s is %q, want one of %s", s.Namespace, s.Name, SecretTypeLabel, kind, strings.Join(kinds, ", "))
	}
	get := func(k string) string {
		if v, ok := s.StringData[k]; ok {
			return v
		}
		return string(s.Data[k])
	}
	c := RepoCredential{
		URL: get("url"), Type: get("type"), Username: get("username"), Password: get("password"),
		BearerToken: get("bearerToken"), SSHPrivateKey: get("sshPrivateKey"),
		Insecure: get("insecure") == "true", EnableOCI: get("enableOCI") == "true",
		InsecureOCIForceHTTP: get("insecureOCIForceHttp") == "true",
		Prefix:               kind == SecretTypeRepoCreds || kind == SecretTypeRepoWriteCreds,
	}
	if c.URL == "" {
		return RepoCredential{}, fmt.Errorf("secret %s/%s: field url is empty", s.Namespace, s.Name)
	}
	return c, nil
}

// Credentials is the set of known repository credentials.
type Credentials []RepoCredential

// CredentialsFromSecrets reads the repository and repo-creds Secrets among
// secrets (what a controller lists in its namespace); Secrets without either
// label are skipped. A labelled Secret that cannot be read is left out and
// named in the returned error, one joined error per Secret, while the
// credentials of the others are still returned: one broken Secret does not
// cut off every repository. The result follows namespace and name order,
// so of two Secrets for one URL the same one always wins.
func CredentialsFromSecrets(secrets []corev1.Secret) (Credentials, error) {
	return credentialsOf(secrets, SecretTypeRepo, SecretTypeRepoCreds)
}

// WriteCredentialsFromSecrets reads the repository-write and
// repo-write-creds Secrets among secrets, as CredentialsFromSecrets reads
// the others.
func WriteCredentialsFromSecrets(secrets []corev1.Secret) (Credentials, error) {
	return credentialsOf(secrets, SecretTypeRepoWrite, SecretTypeRepoWriteCreds)
}

// credentialsOf reads the Secrets of the two kinds among secrets.
func credentialsOf(secrets []corev1.Secret, one, prefix string) (Credentials, error) {
	order := make([]*corev1.Secret, len(secrets))
	for i := range secrets {
		order[i] = &secrets[i]
	}
	slices.SortFunc(order, func(a, b *corev1.Secret) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var (
		creds Credentials
		errs  []error
	)
	for _, s := range order {
		if kind := s.Labels[SecretTypeLabel]; kind != one && kind != prefix {
			continue
		}
		c, err := CredentialFromSecret(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		creds = append(creds, c)
	}
	return creds, errors.Join(errs...)
}

// For returns the credentials of repoURL: an exact repository match first,
// then the repo-creds template with the longest matching URL prefix.
func (cs Credentials) For(repoURL string) *RepoCredential {
	key := NormalizeURL(repoURL)
	var best *RepoCredential
	for i := range cs {
		c := &cs[i]
		ck := NormalizeURL(c.URL)
		if !c.Prefix && ck == key {
			return c
		}
		if c.Prefix && strings.HasPrefix(key, ck) && (best == nil || len(ck) > len(NormalizeURL(best.URL))) {
			best = c
		}
	}
	return best
}

func (c *RepoCredential) insecure() bool { return c != nil && c.Insecure }

// gitAuth turns the credentials of repoURL into a go-git auth method; an
// SSH key is checked against hosts unless the credentials are insecure.
func (c *RepoCredential) gitAuth(repoURL string, hosts *knownHosts) (transport.AuthMethod, error) {
	switch {
	case c == nil:
		return nil, nil
	case c.SSHPrivateKey != "":
		return c.sshAuth(repoURL, hosts)
	case c.BearerToken != "":
		return &githttp.TokenAuth{Token: c.BearerToken}, nil
	case c.Username != "" || c.Password != "":
		user := c.Username
		if user == "" {
			user = "x-access-token" // token-only Secrets, as GitHub expects
		}
		return &githttp.BasicAuth{Username: user, Password: c.Password}, nil
	}
	return nil, nil
}

// scrub removes every secret of c from msg.
func (c *RepoCredential) scrub(msg string) string {
	if c == nil {
		return msg
	}
	for _, s := range []string{c.Password, c.BearerToken, c.SSHPrivateKey} {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "******")
		}
	}
	return msg
}

// RedactURL removes a password from a URL's user info.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// NormalizeURL returns the form of a repository URL used as a cache and
// lookup key: lower-case scheme and host, no user info, no trailing slash
// or ".git".
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		u.User = nil
		u.Scheme = strings.ToLower(u.Scheme)
		u.Host = strings.ToLower(u.Host)
		s = u.String()
	}
	s = strings.TrimSuffix(s, "/")
	return strings.TrimSuffix(s, ".git")
}
