package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ErrProbeUnsupported says a repository of this kind is not probed (OCI
// registries).
var ErrProbeUnsupported = errors.New("the connection to OCI repositories is not checked")

// ProbeOptions configure Probe.
type ProbeOptions struct {
	// KnownHosts are the trusted SSH host keys (see
	// ReposOptions.KnownHosts).
	KnownHosts string
	// Timeout bounds the probe (default 15s).
	Timeout time.Duration
}

// Probe checks that a repository answers with the credential's rights,
// as Argo CD checks a repository before it adds one: a Git repository
// lists its refs, a Helm repository serves its index.yaml. Errors never
// hold the credential's secrets.
func Probe(ctx context.Context, cred RepoCredential, opts ProbeOptions) error {
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	switch {
	case cred.Type == "oci" || cred.EnableOCI || strings.HasPrefix(cred.URL, "oci://"):
		return ErrProbeUnsupported
	case cred.Type == "helm":
		return probeHelm(ctx, cred)
	}
	hosts, err := parseKnownHosts(opts.KnownHosts)
	if err != nil {
		return err
	}
	auth, err := cred.gitAuth(cred.URL, hosts)
	if err != nil {
		return err
	}
	remote := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: originRemote, URLs: []string{cred.URL}})
	if _, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, InsecureSkipTLS: cred.Insecure}); err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		msg := strings.ReplaceAll(err.Error(), cred.URL, RedactURL(cred.URL)) + authHint(err)
		return &redactedError{msg: cred.scrub(msg), err: err}
	}
	return nil
}

func probeHelm(ctx context.Context, cred RepoCredential) error {
	u := strings.TrimSuffix(cred.URL, "/") + "/index.yaml"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", RedactURL(u), err)
	}
	switch {
	case cred.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+cred.BearerToken)
	case cred.Username != "" || cred.Password != "":
		req.SetBasicAuth(cred.Username, cred.Password)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if cred.Insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the repository's insecure setting
	}
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", RedactURL(u), scrubErr(err, u))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", RedactURL(u), resp.Status)
	}
	return nil
}
