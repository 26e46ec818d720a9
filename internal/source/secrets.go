package source

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// labelSecretType marks Argo CD's Secrets by kind (repository,
// repo-creds, cluster).
const labelSecretType = "argocd.argoproj.io/secret-type"

// DefaultCredentialsTTL is how long SecretCredentials keeps what it read.
const DefaultCredentialsTTL = 30 * time.Second

// SecretCredentials reads the repository and repo-creds Secrets of one
// namespace, at most every TTL, for a controller that resolves many
// sources: credentials added or rotated in the cluster take effect within
// TTL without a read per source. It is safe for concurrent use.
type SecretCredentials struct {
	// Reader lists the Secrets (an uncached reader: the controller does
	// not watch Secrets).
	Reader    client.Reader
	Namespace string
	// TTL defaults to DefaultCredentialsTTL; Now to time.Now.
	TTL time.Duration
	Now func() time.Time

	mu   sync.Mutex
	read time.Time
}

// Due reads the Secrets again when TTL has passed since the last read and
// returns what they hold, with fresh true; otherwise it returns fresh
// false and the caller keeps what it has. A Secret that cannot be parsed
// is left out and reported in err with the others still returned; a
// failed listing returns fresh false and err.
func (s *SecretCredentials) Due(ctx context.Context) (creds Credentials, fresh bool, err error) {
	now, ttl := time.Now, s.TTL
	if s.Now != nil {
		now = s.Now
	}
	if ttl == 0 {
		ttl = DefaultCredentialsTTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now().Sub(s.read) < ttl {
		return nil, false, nil
	}
	s.read = now()
	secrets := &corev1.SecretList{}
	if err := s.Reader.List(ctx, secrets, client.InNamespace(s.Namespace), client.HasLabels{labelSecretType}); err != nil {
		return nil, false, fmt.Errorf("read repository secrets: %w", err)
	}
	creds, err = CredentialsFromSecrets(secrets.Items)
	return creds, true, err
}
