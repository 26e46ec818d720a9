package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/sso"
)

// Store reads and writes the account settings in one namespace.
type Store struct {
	Client    client.Client
	Namespace string
}

// Settings is what authentication reads from the cluster.
type Settings struct {
	Accounts  map[string]*Account
	SecretKey []byte
	// SSO is argocd-cm's oidc.config; nil when absent or unusable.
	SSO *sso.Config
	// SSOError says why an oidc.config present is unusable.
	SSOError error
	// Anonymous is argocd-cm's users.anonymous.enabled: a request without
	// a token acts with policy.default's rights.
	Anonymous bool
	// PasswordPattern is the rule new passwords follow (argocd-cm
	// passwordPattern, DefaultPasswordPattern when absent).
	PasswordPattern string
}

// KeyAnonymous is the argocd-cm key that lets requests without a token in.
const KeyAnonymous = "users.anonymous.enabled"

// Settings reads argocd-cm and argocd-secret. Both may be missing: then
// only admin exists, without a password, and no token verifies.
func (s Store) Settings(ctx context.Context) (*Settings, error) {
	var cm corev1.ConfigMap
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: ConfigMapName}, &cm); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", s.Namespace, ConfigMapName, err)
	}
	var sec corev1.Secret
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: SecretName}, &sec); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read Secret %s/%s: %w", s.Namespace, SecretName, err)
	}
	accounts, err := ParseAccounts(cm.Data, sec.Data)
	if err != nil {
		slog.WarnContext(ctx, "some account settings are unreadable", "err", err)
	}
	st := &Settings{Accounts: accounts, SecretKey: sec.Data[KeyServerSecretKey], Anonymous: cm.Data[KeyAnonymous] == "true",
		PasswordPattern: cmp.Or(cm.Data[KeyPasswordPattern], DefaultPasswordPattern)}
	st.SSO, st.SSOError = sso.ParseConfig(ctx, cm.Data, s.secretLookup(sec.Data))
	return st, nil
}

// secretLookup resolves oidc.config's `$` references: argocd-secret's
// keys from data, another Secret's when it carries the label
// app.kubernetes.io/part-of=argocd, as in Argo CD (settings.SecretRef).
func (s Store) secretLookup(settingsData map[string][]byte) sso.SecretLookup {
	return func(ctx context.Context, ref settings.SecretRef) (string, error) {
		sec := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: SecretName}, Data: settingsData}
		if ref.Secret != SecretName {
			if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: ref.Secret}, &sec); err != nil {
				return "", fmt.Errorf("read Secret %s/%s: %w", s.Namespace, ref.Secret, err)
			}
		}
		return ref.Value(&sec)
	}
}

// BootstrapResult says what Bootstrap created.
type BootstrapResult struct {
	// GeneratedAdminPassword is set when Bootstrap generated the admin
	// password: it is in Secret argocd-initial-admin-secret.
	GeneratedAdminPassword bool
	// GeneratedSecretKey is set when Bootstrap generated server.secretkey.
	GeneratedSecretKey bool
}

// Bootstrap makes sure argocd-secret holds a signing key and an admin
// password, generating what is missing (see the package doc). It is safe
// to run from several replicas at once.
func (s Store) Bootstrap(ctx context.Context) (BootstrapResult, error) {
	var res BootstrapResult
	var plain string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		res, plain = BootstrapResult{}, ""
		var sec corev1.Secret
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: SecretName}, &sec)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("read Secret %s/%s: %w", s.Namespace, SecretName, err)
		}
		if !exists {
			sec = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: SecretName, Labels: partOf()}}
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		if len(sec.Data[KeyServerSecretKey]) == 0 {
			key := make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return fmt.Errorf("generate %s: %w", KeyServerSecretKey, err)
			}
			sec.Data[KeyServerSecretKey] = key
			res.GeneratedSecretKey = true
		}
		if len(sec.Data[PasswordKey(AdminAccount)]) == 0 {
			if plain, err = randomPassword(); err != nil {
				return err
			}
			if err := setPassword(sec.Data, AdminAccount, plain, time.Now()); err != nil {
				return err
			}
			res.GeneratedAdminPassword = true
		}
		if !res.GeneratedSecretKey && !res.GeneratedAdminPassword {
			return nil
		}
		if !exists {
			err = s.Client.Create(ctx, &sec)
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("secrets"), SecretName, err) // another replica won: retry
			}
		} else {
			err = s.Client.Update(ctx, &sec)
		}
		return err
	})
	if err != nil {
		return res, fmt.Errorf("bootstrap Secret %s/%s: %w", s.Namespace, SecretName, err)
	}
	if res.GeneratedAdminPassword {
		if err := s.writeInitialPassword(ctx, plain); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writeInitialPassword stores the generated admin password in
// argocd-initial-admin-secret, replacing an older one.
func (s Store) writeInitialPassword(ctx context.Context, plain string) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: InitialAdminSecretName, Labels: partOf()}}
	if err := createOrUpdate(ctx, s.Client, sec, func() { sec.Data = map[string][]byte{KeyInitialPassword: []byte(plain)} }); err != nil {
		return fmt.Errorf("write Secret %s/%s: %w", s.Namespace, InitialAdminSecretName, err)
	}
	return nil
}

func createOrUpdate(ctx context.Context, c client.Client, sec *corev1.Secret, mutate func()) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(sec), sec)
	if apierrors.IsNotFound(err) {
		mutate()
		return c.Create(ctx, sec)
	}
	if err != nil {
		return err
	}
	mutate()
	return c.Update(ctx, sec)
}

// InitialPassword reads the generated admin password from
// argocd-initial-admin-secret.
func (s Store) InitialPassword(ctx context.Context) (string, error) {
	var sec corev1.Secret
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: InitialAdminSecretName}, &sec)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("secret %s/%s not found: the admin password was not generated here (it was set by hand, or the secret was deleted after the first login)", s.Namespace, InitialAdminSecretName)
	}
	if err != nil {
		return "", fmt.Errorf("read Secret %s/%s: %w", s.Namespace, InitialAdminSecretName, err)
	}
	pw, ok := sec.Data[KeyInitialPassword]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", s.Namespace, InitialAdminSecretName, KeyInitialPassword)
	}
	return string(pw), nil
}

// IssueAPIToken issues an API token for an account with the apiKey
// capability, records it in accounts.NAME.tokens and returns it. A zero
// expiresIn never expires.
func (s Store) IssueAPIToken(ctx context.Context, account string, expiresIn time.Duration) (string, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return "", err
	}
	a := st.Accounts[account]
	switch {
	case a == nil:
		return "", fmt.Errorf("account %q does not exist", account)
	case !a.Has(CapabilityAPIKey):
		return "", fmt.Errorf("account %q does not have the apiKey capability", account)
	case len(st.SecretKey) == 0:
		return "", errors.New("no signing key: the API server has not bootstrapped argocd-secret")
	}
	id, err := newID()
	if err != nil {
		return "", err
	}
	now := time.Now()
	c := Claims{Issuer: Issuer, Subject: account + ":" + CapabilityAPIKey, IssuedAt: now.Unix(), NotBefore: now.Unix(), ID: id}
	if expiresIn > 0 {
		c.ExpiresAt = now.Add(expiresIn).Unix()
	}
	err = s.updateTokens(ctx, account, func(tokens []TokenRecord) ([]TokenRecord, error) {
		return append(tokens, TokenRecord{ID: id, IssuedAt: c.IssuedAt, ExpiresAt: c.ExpiresAt}), nil
	})
	if err != nil {
		return "", fmt.Errorf("record API token of %q: %w", account, err)
	}
	return Sign(st.SecretKey, c)
}

// HashPassword returns the bcrypt hash of a password.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

func setPassword(data map[string][]byte, account, plain string, now time.Time) error {
	h, err := HashPassword(plain)
	if err != nil {
		return err
	}
	data[PasswordKey(account)] = []byte(h)
	data[PasswordMtimeKey(account)] = []byte(now.UTC().Format(time.RFC3339))
	return nil
}

const passwordAlphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// randomPassword returns 16 random characters, as Argo CD generates.
func randomPassword() (string, error) {
	b := make([]byte, 16)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(passwordAlphabet))))
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		b[i] = passwordAlphabet[n.Int64()]
	}
	return string(b), nil
}

func partOf() map[string]string {
	return map[string]string{"app.kubernetes.io/part-of": "argocd"}
}
