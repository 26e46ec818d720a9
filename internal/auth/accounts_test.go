package auth

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

type wantAccount struct {
	Enabled       bool          `json:"enabled"`
	Capabilities  []string      `json:"capabilities"`
	PasswordHash  string        `json:"passwordHash"`
	PasswordMtime string        `json:"passwordMtime"`
	Tokens        []TokenRecord `json:"tokens"`
}

func TestParseAccounts(t *testing.T) {
	raw, err := os.ReadFile("testdata/accounts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name      string                 `json:"name"`
		CM        map[string]string      `json:"cm"`
		Secret    map[string]string      `json:"secret"`
		WantError bool                   `json:"wantError"`
		Want      map[string]wantAccount `json:"want"`
	}
	if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			secret := map[string][]byte{}
			for k, v := range tc.Secret {
				secret[k] = []byte(v)
			}
			accounts, err := ParseAccounts(tc.CM, secret)
			if (err != nil) != tc.WantError {
				t.Fatalf("error = %v, want an error: %v", err, tc.WantError)
			}
			got := map[string]wantAccount{}
			for name, a := range accounts {
				w := wantAccount{Enabled: a.Enabled, Capabilities: a.Capabilities, PasswordHash: a.PasswordHash, Tokens: a.Tokens}
				if !a.PasswordMtime.IsZero() {
					w.PasswordMtime = a.PasswordMtime.UTC().Format(time.RFC3339)
				}
				got[name] = w
			}
			if diff := cmp.Diff(tc.Want, got); diff != "" {
				t.Errorf("accounts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
