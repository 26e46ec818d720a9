package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeyPasswordPattern is the argocd-cm key of the rule new passwords
// follow; DefaultPasswordPattern when absent, as in Argo CD.
const (
	KeyPasswordPattern     = "passwordPattern"
	DefaultPasswordPattern = "^.{8,32}$"
)

// ErrNoSuchAccount says an account is not in argocd-cm.
var ErrNoSuchAccount = errors.New("account does not exist")

// SetPassword sets account's password and its change time in
// argocd-secret: sessions issued before it end.
func (s Store) SetPassword(ctx context.Context, account, plain string) error {
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	if st.Accounts[account] == nil {
		return fmt.Errorf("account '%s': %w", account, ErrNoSuchAccount)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var sec corev1.Secret
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: SecretName}, &sec); err != nil {
			return err
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		if err := setPassword(sec.Data, account, plain, time.Now()); err != nil {
			return err
		}
		return s.Client.Update(ctx, &sec)
	})
	if err != nil {
		return fmt.Errorf("update the password of %q: %w", account, err)
	}
	return nil
}

// CheckPassword checks a user's password as a login does (throttled, in
// the same time whether or not the user exists), without starting a
// session. Errors: ErrBadCredentials, *ThrottledError, or a failure to
// read the settings.
func (a *Authenticator) CheckPassword(ctx context.Context, username, password, clientIP string) error {
	_, err := a.checkPassword(ctx, username, password, clientIP)
	return err
}

// ErrNoSuchToken says an account has no API token of an id.
var ErrNoSuchToken = errors.New("token does not exist")

// DeleteAPIToken removes an API token from accounts.NAME.tokens: it stops
// working at once.
func (s Store) DeleteAPIToken(ctx context.Context, account, id string) error {
	return s.updateTokens(ctx, account, func(tokens []TokenRecord) ([]TokenRecord, error) {
		kept := slices.DeleteFunc(tokens, func(t TokenRecord) bool { return t.ID == id })
		if len(kept) == len(tokens) {
			return nil, fmt.Errorf("token with id '%s': %w", id, ErrNoSuchToken)
		}
		return kept, nil
	})
}

// updateTokens rewrites accounts.NAME.tokens in argocd-secret with edit,
// which gets a copy of the list, retrying on conflicts.
func (s Store) updateTokens(ctx context.Context, account string, edit func([]TokenRecord) ([]TokenRecord, error)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var sec corev1.Secret
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: SecretName}, &sec); err != nil {
			return err
		}
		var tokens []TokenRecord
		if raw := sec.Data[TokensKey(account)]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &tokens); err != nil {
				return fmt.Errorf("%s: %w", TokensKey(account), err)
			}
		}
		tokens, err := edit(tokens)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(tokens)
		if err != nil {
			return err
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		sec.Data[TokensKey(account)] = raw
		return s.Client.Update(ctx, &sec)
	})
}
