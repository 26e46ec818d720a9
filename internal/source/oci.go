package source

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// fetchOCI pulls a chart from an OCI registry: repoURL is
// oci://host/path and the chart is at host/path/name:version.
func (c *Charts) fetchOCI(ctx context.Context, repoURL, name, constraint string) (*FetchedChart, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(repoURL, "oci://"), "/") + "/" + name
	client, err := c.registryClient(repoURL)
	if err != nil {
		return nil, err
	}
	version, err := ociVersion(client, ref, constraint)
	if err != nil {
		return nil, err
	}
	key := NormalizeURL(repoURL) + "|" + name + "|" + version
	if data, ok := c.cachedArchive(key); ok {
		return &FetchedChart{Version: version, Archive: data}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := client.Pull(ref+":"+version, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("pull %s:%s: %w", ref, version, err)
	}
	c.storeArchive(key, res.Chart.Data)
	return &FetchedChart{Version: version, Archive: res.Chart.Data}, nil
}

// registryClient talks to the registry of repoURL with the credentials of
// repoURL only, never with those in Helm's or Docker's config files.
func (c *Charts) registryClient(repoURL string) (*registry.Client, error) {
	authorizer := auth.Client{Client: c.opts.HTTPClient, Cache: auth.NewCache()}
	authorizer.SetUserAgent("wavecd")
	cred := c.credentials(repoURL)
	if cred != nil && (cred.Username != "" || cred.Password != "") {
		authorizer.Credential = func(context.Context, string) (auth.Credential, error) {
			return auth.Credential{Username: cred.Username, Password: cred.Password}, nil
		}
	}
	opts := []registry.ClientOption{registry.ClientOptEnableCache(false), registry.ClientOptHTTPClient(c.opts.HTTPClient), registry.ClientOptAuthorizer(authorizer)}
	if c.opts.PlainHTTPRegistries || (cred != nil && cred.InsecureOCIForceHTTP) || c.loopbackMirror(repoURL) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("registry client: %w", err)
	}
	return client, nil
}

// ociVersion picks the tag: an exact version as given, else the newest tag
// matching the constraint.
func ociVersion(client *registry.Client, ref, constraint string) (string, error) {
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(constraint, "v")); err == nil {
		return constraint, nil
	}
	tags, err := client.Tags(ref)
	if err != nil {
		return "", fmt.Errorf("list tags of %s: %w", ref, err)
	}
	if constraint == "" {
		constraint = "*"
	}
	cons, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("bad version constraint %q: %w", constraint, err)
	}
	for _, t := range tags { // Tags returns newest first
		v, err := semver.NewVersion(t)
		if err == nil && cons.Check(v) {
			return t, nil
		}
	}
	return "", fmt.Errorf("no tag of %s matches %q", ref, constraint)
}

// loopbackMirror reports a registry that a mirror points at on this
// machine (127.0.0.0/8, ::1, localhost): it is spoken to over plain HTTP,
// as Docker does, since a mirror served by a rehearsal or a test has no
// certificate to present. A registry an app names itself is spoken to
// over HTTPS unless plain HTTP is asked for.
func (c *Charts) loopbackMirror(repoURL string) bool {
	target := NormalizeURL(repoURL)
	for _, t := range c.opts.Mirrors {
		if IsRegistry(t) && NormalizeURL(t) == target {
			return onLoopback(t)
		}
	}
	return false
}

func onLoopback(repoURL string) bool {
	host := strings.TrimPrefix(repoURL, "oci://")
	host, _, _ = strings.Cut(host, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
