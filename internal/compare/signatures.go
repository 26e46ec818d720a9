package compare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// GPGKeysConfigMap holds the OpenPGP public keys commits are verified
// with, keyed by key ID, as in Argo CD.
const GPGKeysConfigMap = "argocd-gpg-keys-cm"

// SignatureKeys are the key IDs a project accepts commit signatures of;
// none means signatures are not checked.
func SignatureKeys(proj *v1alpha1.AppProject) []string {
	if proj == nil {
		return nil
	}
	out := make([]string, 0, len(proj.Spec.SignatureKeys))
	for _, k := range proj.Spec.SignatureKeys {
		out = append(out, k.KeyID)
	}
	return out
}

// verifySignatures checks that each resolved Git commit of pinned is
// signed by one of keys, and, where app's source names an annotated tag,
// the tag too, before anything renders. A refusal names the commit (or
// tag) and the key.
func (c *Comparer) verifySignatures(ctx context.Context, app, pinned *v1alpha1.Application, keys []string) error {
	keyring, err := c.keyring(ctx)
	if err != nil {
		return err
	}
	named := SourcesOf(&app.Spec)
	for i, src := range SourcesOf(&pinned.Spec) {
		if !source.KindOf(src).PinsRevision() {
			continue // a chart or an artifact: Argo CD verifies Git only
		}
		if _, err := c.repos.VerifyCommit(ctx, src.RepoURL, src.TargetRevision, keyring, keys); err != nil {
			return fmt.Errorf("application %s: %w", app.Name, err)
		}
		if i < len(named) {
			if _, err := c.repos.VerifyTag(ctx, src.RepoURL, named[i].TargetRevision, keyring, keys); err != nil {
				return fmt.Errorf("application %s: %w", app.Name, err)
			}
		}
	}
	return nil
}

// keyringReuse is how long a keyring read answers the comparisons after
// it: a refresh round of many apps of a signed project reads
// argocd-gpg-keys-cm a few times, not once per app, and a changed key
// counts within this long.
const keyringReuse = 10 * time.Second

// keyringCache is the last keyring read, and when.
type keyringCache struct {
	mu   sync.Mutex
	at   time.Time
	keys openpgp.EntityList
}

// keyring is argocd-gpg-keys-cm's keys, read again once keyringReuse has
// passed; a missing ConfigMap is an empty keyring, against which every
// signature is unknown.
func (c *Comparer) keyring(ctx context.Context) (openpgp.EntityList, error) {
	c.keys.mu.Lock()
	defer c.keys.mu.Unlock()
	now := c.opts.Now()
	if !c.keys.at.IsZero() && now.Sub(c.keys.at) < keyringReuse {
		return c.keys.keys, nil
	}
	keys, err := c.readKeyring(ctx)
	if err != nil {
		return nil, err
	}
	c.keys.at, c.keys.keys = now, keys
	return keys, nil
}

// readKeyring reads and parses argocd-gpg-keys-cm.
func (c *Comparer) readKeyring(ctx context.Context) (openpgp.EntityList, error) {
	if c.opts.Reader == nil {
		return nil, errors.New("signature keys are required, but argocd-gpg-keys-cm cannot be read here")
	}
	cm := &corev1.ConfigMap{}
	err := c.opts.Reader.Get(ctx, types.NamespacedName{Namespace: c.opts.Namespace, Name: GPGKeysConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", GPGKeysConfigMap, err)
	}
	keyring, err := source.ParseKeyring(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", GPGKeysConfigMap, err)
	}
	return keyring, nil
}
