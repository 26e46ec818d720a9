package auth

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/settings"
)

// Names of the settings objects and keys, as in Argo CD.
const (
	ConfigMapName          = "argocd-cm"
	SecretName             = settings.Secret
	InitialAdminSecretName = "argocd-initial-admin-secret"

	AdminAccount       = "admin"
	KeyServerSecretKey = "server.secretkey"
	KeyInitialPassword = "password"
	keyAdminEnabled    = "admin.enabled"
	accountsPrefix     = "accounts."
)

// Account is one local account.
type Account struct {
	Name         string
	Enabled      bool
	Capabilities []string
	// PasswordHash is the bcrypt hash; empty when no password is set.
	PasswordHash  string
	PasswordMtime time.Time
	// Tokens are the API tokens issued to the account.
	Tokens []TokenRecord
}

// Has reports whether the account has a capability (login or apiKey).
func (a *Account) Has(capability string) bool { return slices.Contains(a.Capabilities, capability) }

// TokenRecord is one API token issued to an account, as stored in
// accounts.NAME.tokens.
type TokenRecord struct {
	ID        string `json:"id"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp,omitempty"`
}

// PasswordKey and friends name an account's keys in argocd-secret.
func PasswordKey(account string) string      { return secretPrefix(account) + "password" }
func PasswordMtimeKey(account string) string { return secretPrefix(account) + "passwordMtime" }
func TokensKey(account string) string        { return accountsPrefix + account + ".tokens" }

func secretPrefix(account string) string {
	if account == AdminAccount {
		return "admin."
	}
	return accountsPrefix + account + "."
}

// ParseAccounts reads the accounts from argocd-cm's data (cm) and
// argocd-secret's data (secret). A key it cannot read is reported in the
// error; the other accounts are still returned.
func ParseAccounts(cm map[string]string, secret map[string][]byte) (map[string]*Account, error) {
	accounts := map[string]*Account{
		AdminAccount: {Name: AdminAccount, Enabled: cm[keyAdminEnabled] != "false", Capabilities: []string{CapabilityLogin}},
	}
	keys := make([]string, 0, len(cm))
	for k := range cm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, accountsPrefix)
		if !ok || rest == "" {
			continue
		}
		name, field, _ := strings.Cut(rest, ".")
		if name == AdminAccount {
			continue
		}
		a := accounts[name]
		if a == nil {
			a = &Account{Name: name, Enabled: true, Capabilities: []string{CapabilityLogin}}
			accounts[name] = a
		}
		switch field {
		case "":
			a.Capabilities = parseCapabilities(cm[k])
		case "enabled":
			a.Enabled = cm[k] != "false"
		}
	}
	var errs []string
	for name, a := range accounts {
		a.PasswordHash = string(secret[PasswordKey(name)])
		if mt := secret[PasswordMtimeKey(name)]; len(mt) > 0 {
			t, err := time.Parse(time.RFC3339, string(mt))
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", PasswordMtimeKey(name), err))
			}
			a.PasswordMtime = t
		}
		if raw := secret[TokensKey(name)]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &a.Tokens); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", TokensKey(name), err))
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return accounts, fmt.Errorf("read accounts from %s: %s", SecretName, strings.Join(errs, "; "))
	}
	return accounts, nil
}

// parseCapabilities reads "apiKey, login"; empty means login.
func parseCapabilities(v string) []string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return []string{CapabilityLogin}
	}
	return out
}
