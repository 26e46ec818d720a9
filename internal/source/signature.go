package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
)

// SignatureError says why a commit's signature is not accepted; its
// message is Argo CD's where Argo CD has one.
type SignatureError struct {
	// Commit is the commit SHA; KeyID the signing key's ID (16 upper-case
	// hexadecimal digits), empty for an unsigned commit.
	Commit, KeyID string
	Reason        string
}

func (e *SignatureError) Error() string { return e.Reason }

// ParseKeyring reads ASCII-armored OpenPGP public keys, one or more per
// value, as argocd-gpg-keys-cm holds them (keyed by key ID). An error names
// the key.
func ParseKeyring(keys map[string]string) (openpgp.EntityList, error) {
	var out openpgp.EntityList
	for _, id := range slices.Sorted(maps.Keys(keys)) {
		list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(keys[id]))
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", id, err)
		}
		out = append(out, list...)
	}
	return out, nil
}

// VerifyCommit checks the OpenPGP signature of commit sha of the
// repository at repoURL (fetched before, as Resolve does): it must verify
// with a key of keyring whose ID, or whose primary key's ID, is one of
// allowed. It returns the signing key's ID; a refusal is a
// *SignatureError.
func (r *Repos) VerifyCommit(ctx context.Context, repoURL, sha string, keyring openpgp.EntityList, allowed []string) (string, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return "", err
	}
	if loc.kind == locFolder {
		return "", &SignatureError{Commit: sha, Reason: fmt.Sprintf("%s is not a Git repository: its revision cannot be signed, but a signature is required", loc.display)}
	}
	repo, err := r.repo(loc)
	if err != nil {
		return "", err
	}
	signature, payload, err := repo.signedPayload(sha)
	if err != nil {
		return "", fmt.Errorf("read commit %s of %s: %w", sha, loc.display, err)
	}
	return verifySignature(sha, signature, payload, keyring, allowed)
}

// VerifyTag checks the OpenPGP signature of the annotated tag revision
// names in the repository at repoURL, as VerifyCommit checks a commit's.
// A revision that is not an annotated tag (a branch, a commit, a
// lightweight tag) has no tag signature: it returns "" and no error.
func (r *Repos) VerifyTag(ctx context.Context, repoURL, revision string, keyring openpgp.EntityList, allowed []string) (string, error) {
	loc, err := r.locate(repoURL)
	if err != nil || loc.kind == locFolder || revision == "" {
		return "", err
	}
	repo, err := r.repo(loc)
	if err != nil {
		return "", err
	}
	signature, payload, ok, err := repo.tagPayload(strings.TrimPrefix(revision, "refs/tags/"))
	if err != nil || !ok {
		return "", err
	}
	key, err := verifySignature("tag "+revision, signature, payload, keyring, allowed)
	var se *SignatureError
	if errors.As(err, &se) && se.KeyID == "" {
		se.Reason = fmt.Sprintf("Target revision %s in Git is an annotated tag that is not signed, but a signature is required", revision)
	}
	return key, err
}

// tagPayload returns the armored signature of the annotated tag name and
// the bytes it signs; ok is false when name is no annotated tag.
func (g *gitRepo) tagPayload(name string) (string, []byte, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo, err := g.openLocked()
	if err != nil {
		return "", nil, false, err
	}
	ref, err := repo.Reference(plumbing.NewTagReferenceName(name), false)
	if err != nil {
		return "", nil, false, nil // not a tag
	}
	tag, err := repo.TagObject(ref.Hash())
	if err != nil {
		return "", nil, false, nil // a lightweight tag
	}
	if tag.PGPSignature == "" {
		return "", nil, true, nil
	}
	payload, err := signedBytes(tag.EncodeWithoutSignature)
	return tag.PGPSignature, payload, true, err
}

// signedBytes are what an object's signature signs: the object encoded
// without its signature.
func signedBytes(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := encode(obj); err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	return io.ReadAll(rd)
}

// signedPayload returns a commit's armored signature and the bytes it
// signs.
func (g *gitRepo) signedPayload(sha string) (string, []byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, commit, err := g.commitLocked(plumbing.NewHash(sha).String())
	if err != nil {
		return "", nil, err
	}
	if commit.PGPSignature == "" {
		return "", nil, nil
	}
	payload, err := signedBytes(commit.EncodeWithoutSignature)
	return commit.PGPSignature, payload, err
}

// verifySignature checks an armored detached signature of payload.
func verifySignature(sha, signature string, payload []byte, keyring openpgp.EntityList, allowed []string) (string, error) {
	if signature == "" {
		return "", &SignatureError{Commit: sha, Reason: fmt.Sprintf("Target revision %s in Git is not signed, but a signature is required", sha)}
	}
	issuer := signatureIssuer(signature)
	signer, err := openpgp.CheckArmoredDetachedSignature(keyring, bytes.NewReader(payload), strings.NewReader(signature), nil)
	switch {
	case errors.Is(err, pgperrors.ErrUnknownIssuer) || (err == nil && signer == nil):
		return "", &SignatureError{Commit: sha, KeyID: issuer,
			Reason: fmt.Sprintf("revision %s is signed with key %s, which is not in argocd-gpg-keys-cm", sha, issuer)}
	case err != nil:
		return "", &SignatureError{Commit: sha, KeyID: issuer,
			Reason: fmt.Sprintf("Found signature made with key %s on revision %s, but verification result was invalid: '%v'", issuer, sha, err)}
	}
	primary := keyID(signer.PrimaryKey.KeyId)
	for _, a := range allowed {
		if strings.EqualFold(a, issuer) || strings.EqualFold(a, primary) {
			return issuer, nil
		}
	}
	return "", &SignatureError{Commit: sha, KeyID: issuer,
		Reason: fmt.Sprintf("Found good signature made with key %s on revision %s, but this key is not allowed in AppProject", issuer, sha)}
}

// signatureIssuer is the ID of the key an armored signature names, or
// "unknown".
func signatureIssuer(signature string) string {
	block, err := armor.Decode(strings.NewReader(signature))
	if err != nil {
		return "unknown"
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return "unknown"
	}
	if sig, ok := p.(*packet.Signature); ok && sig.IssuerKeyId != nil {
		return keyID(*sig.IssuerKeyId)
	}
	return "unknown"
}

func keyID(id uint64) string { return fmt.Sprintf("%016X", id) }
