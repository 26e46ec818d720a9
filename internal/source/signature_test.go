package source_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestVerifyCommit verifies commits signed by a key of the keyring that
// the project allows, by one it does not allow, by a key not in the
// keyring, and an unsigned commit; each refusal names the commit and key.
func TestVerifyCommit(t *testing.T) {
	alice, aliceArmored, aliceID := testenv.NewSigningKey(t, "alice")
	bob, bobArmored, bobID := testenv.NewSigningKey(t, "bob")
	mallory, _, malloryID := testenv.NewSigningKey(t, "mallory")
	keyring, err := source.ParseKeyring(map[string]string{aliceID: aliceArmored, bobID: bobArmored})
	if err != nil {
		t.Fatal(err)
	}
	repo := testenv.NewGitRepo(t, map[string]string{"app/cm.yaml": "a: 1\n"})
	unsigned := repo.Git("rev-parse", "HEAD")
	byAlice := repo.SignedCommit(map[string]string{"app/cm.yaml": "a: 2\n"}, "by alice", alice)
	byBob := repo.SignedCommit(map[string]string{"app/cm.yaml": "a: 3\n"}, "by bob", bob)
	byMallory := repo.SignedCommit(map[string]string{"app/cm.yaml": "a: 4\n"}, "by mallory", mallory)

	tests := map[string]struct {
		commit, wantKey, wantErr string
	}{
		"signed by an allowed key":    {commit: byAlice, wantKey: aliceID},
		"signed by a key not allowed": {commit: byBob, wantErr: "Found good signature made with key " + bobID + " on revision " + byBob + ", but this key is not allowed in AppProject"},
		"signed by an unknown key":    {commit: byMallory, wantErr: "revision " + byMallory + " is signed with key " + malloryID + ", which is not in argocd-gpg-keys-cm"},
		"unsigned":                    {commit: unsigned, wantErr: "Target revision " + unsigned + " in Git is not signed, but a signature is required"},
	}
	repos := source.NewRepos(source.ReposOptions{CacheDir: t.TempDir()})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := repos.Resolve(context.Background(), repo.Dir, tc.commit); err != nil {
				t.Fatal(err)
			}
			got, err := repos.VerifyCommit(context.Background(), repo.Dir, tc.commit, keyring, []string{strings.ToLower(aliceID)})
			if tc.wantErr != "" {
				var se *source.SignatureError
				if !errors.As(err, &se) || se.Error() != tc.wantErr || se.Commit != tc.commit {
					t.Fatalf("error = %v, want a *SignatureError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.wantKey {
				t.Errorf("VerifyCommit = %q, %v; want %q", got, err, tc.wantKey)
			}
		})
	}
	if _, err := source.ParseKeyring(map[string]string{"0123456789ABCDEF": "not a key"}); err == nil || !strings.Contains(err.Error(), "key 0123456789ABCDEF") {
		t.Errorf("a bad key: %v, want an error naming it", err)
	}
}

// TestVerifyTag verifies the signature of an annotated tag a source
// names; branches and lightweight tags carry none.
func TestVerifyTag(t *testing.T) {
	alice, aliceArmored, aliceID := testenv.NewSigningKey(t, "alice")
	bob, bobArmored, bobID := testenv.NewSigningKey(t, "bob")
	keyring, err := source.ParseKeyring(map[string]string{aliceID: aliceArmored, bobID: bobArmored})
	if err != nil {
		t.Fatal(err)
	}
	repo := testenv.NewGitRepo(t, map[string]string{"app/cm.yaml": "a: 1\n"})
	repo.AnnotatedTag("v1", alice)
	repo.AnnotatedTag("v2", bob)
	repo.AnnotatedTag("v3", nil)
	repo.Git("tag", "light")
	tests := map[string]struct {
		revision, wantKey, wantErr string
	}{
		"signed by an allowed key":    {revision: "v1", wantKey: aliceID},
		"refs/tags/ prefix":           {revision: "refs/tags/v1", wantKey: aliceID},
		"signed by a key not allowed": {revision: "v2", wantErr: "Found good signature made with key " + bobID + " on revision tag v2, but this key is not allowed in AppProject"},
		"annotated, unsigned":         {revision: "v3", wantErr: "Target revision v3 in Git is an annotated tag that is not signed, but a signature is required"},
		"a lightweight tag":           {revision: "light"},
		"a branch":                    {revision: "main"},
	}
	repos := source.NewRepos(source.ReposOptions{CacheDir: t.TempDir()})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := repos.Resolve(context.Background(), repo.Dir, tc.revision); err != nil {
				t.Fatal(err)
			}
			got, err := repos.VerifyTag(context.Background(), repo.Dir, tc.revision, keyring, []string{aliceID})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.wantKey {
				t.Errorf("VerifyTag = %q, %v; want %q", got, err, tc.wantKey)
			}
		})
	}
}
