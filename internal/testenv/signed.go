package testenv

import (
	"bytes"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// NewSigningKey generates an OpenPGP key (Ed25519) for signing commits,
// and returns it with its armored public key and its ID (16 upper-case
// hexadecimal digits, as argocd-gpg-keys-cm and AppProjects name keys).
func NewSigningKey(t testing.TB, name string) (key *openpgp.Entity, armored, id string) {
	t.Helper()
	key, err := openpgp.NewEntity(name, "", name+"@example.test", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := key.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return key, buf.String(), key.PrimaryKey.KeyIdString()
}

// SignedCommit is Commit with the commit signed by key.
func (g *GitRepo) SignedCommit(files map[string]string, msg string, key *openpgp.Entity) string {
	g.t.Helper()
	g.Commit(files, msg+" (to be signed)")
	repo, err := git.PlainOpen(g.Dir)
	if err != nil {
		g.t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		g.t.Fatal(err)
	}
	sig := &object.Signature{Name: "test", Email: "test@example.test", When: time.Now()}
	// Amend the commit just made, signed: its tree and parent stay.
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, SignKey: key, Amend: true})
	if err != nil {
		g.t.Fatal(err)
	}
	return h.String()
}

// AnnotatedTag tags HEAD with an annotated tag name, signed by key unless
// key is nil.
func (g *GitRepo) AnnotatedTag(name string, key *openpgp.Entity) {
	g.t.Helper()
	repo, err := git.PlainOpen(g.Dir)
	if err != nil {
		g.t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		g.t.Fatal(err)
	}
	tagger := &object.Signature{Name: "test", Email: "test@example.test", When: time.Now()}
	if _, err := repo.CreateTag(name, head.Hash(), &git.CreateTagOptions{Tagger: tagger, Message: "release " + name, SignKey: key}); err != nil {
		g.t.Fatal(err)
	}
}
