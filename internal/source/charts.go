package source

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// ChartsOptions configure a Charts fetcher.
type ChartsOptions struct {
	// Mirrors replace Helm repository URLs with local folders holding an
	// index.yaml with its archives, or unpacked charts in <name>/ folders.
	Mirrors Mirrors
	// Credentials for Helm repositories and OCI registries; SetCredentials
	// replaces them.
	Credentials Credentials
	// HTTPClient fetches indexes and archives (default http.DefaultClient).
	HTTPClient *http.Client
	// IndexTTL is how long a repository index is reused (default 1 minute).
	IndexTTL time.Duration
	// MaxArchives bounds the chart archives kept in memory (default 128).
	MaxArchives int
	// PlainHTTPRegistries talks HTTP instead of HTTPS to every OCI
	// registry; credentials with InsecureOCIForceHTTP do so for theirs.
	PlainHTTPRegistries bool
	// MaxArtifactSize bounds an OCI artifact source once unpacked
	// (default 1 GiB, Argo CD's).
	MaxArtifactSize int64
}

func (o ChartsOptions) maxArtifact() int64 {
	if o.MaxArtifactSize > 0 {
		return o.MaxArtifactSize
	}
	return defaultMaxArtifact
}

// Charts fetches charts from Helm repositories (index.yaml over HTTP),
// OCI registries and mirrors. Archives are immutable per version and cached
// in memory; indexes are re-read after IndexTTL. Safe for concurrent use.
type Charts struct {
	opts ChartsOptions

	mu       sync.Mutex
	creds    Credentials
	indexes  map[string]cachedIndex
	archives map[string][]byte
	order    []string

	// artifactTrees are unpacked OCI artifacts by URL and digest.
	artifactTrees *treeCache
}

type cachedIndex struct {
	index   *repo.IndexFile
	fetched time.Time
}

// FetchedChart is a chart at a resolved version: either an archive or an
// unpacked chart folder Dir inside Tree.
type FetchedChart struct {
	Version string
	Archive []byte
	Tree    *Tree
	Dir     string
}

// NewCharts returns a chart fetcher.
func NewCharts(opts ChartsOptions) *Charts {
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.IndexTTL == 0 {
		opts.IndexTTL = time.Minute
	}
	if opts.MaxArchives <= 0 {
		opts.MaxArchives = 128
	}
	return &Charts{opts: opts, creds: opts.Credentials, indexes: map[string]cachedIndex{}, archives: map[string][]byte{},
		artifactTrees: newTreeCache(maxArtifactTrees)}
}

// SetCredentials replaces the credentials, e.g. after the repository
// Secrets changed (see CredentialsFromSecrets).
func (c *Charts) SetCredentials(creds Credentials) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.creds = slices.Clone(creds)
}

// credentials returns the credentials of repoURL, or nil.
func (c *Charts) credentials(repoURL string) *RepoCredential {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creds.For(repoURL)
}

// Fetch returns chart name from the repository at repoURL at the newest
// version that satisfies constraint (an exact version, a semver range, or
// "" for the newest stable version).
func (c *Charts) Fetch(ctx context.Context, repoURL, name, constraint string) (*FetchedChart, error) {
	var (
		fc  *FetchedChart
		err error
	)
	target, mirrored := c.opts.Mirrors.Lookup(repoURL)
	switch {
	case mirrored && IsRegistry(target):
		fc, err = c.fetchOCI(ctx, target, name, constraint)
	case mirrored:
		fc, err = c.fetchMirror(ctx, target, name, constraint)
	case strings.HasPrefix(repoURL, "oci://"):
		fc, err = c.fetchOCI(ctx, repoURL, name, constraint)
	default:
		fc, err = c.fetchHTTP(ctx, repoURL, name, constraint)
	}
	if err != nil {
		return nil, fmt.Errorf("chart %s %s from %s: %w", name, displayConstraint(constraint), RedactURL(repoURL), err)
	}
	return fc, nil
}

func displayConstraint(c string) string {
	if c == "" {
		return "(latest)"
	}
	return c
}

func (c *Charts) fetchHTTP(ctx context.Context, repoURL, name, constraint string) (*FetchedChart, error) {
	idx, err := c.index(ctx, repoURL)
	if err != nil {
		return nil, err
	}
	cv, err := idx.Get(name, constraint)
	if err != nil {
		return nil, err
	}
	key := NormalizeURL(repoURL) + "|" + name + "|" + cv.Version
	if data, ok := c.cachedArchive(key); ok {
		return &FetchedChart{Version: cv.Version, Archive: data}, nil
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("version %s has no download URL in the index", cv.Version)
	}
	u, err := resolveChartURL(repoURL, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	data, err := c.get(ctx, u, repoURL)
	if err != nil {
		return nil, err
	}
	c.storeArchive(key, data)
	return &FetchedChart{Version: cv.Version, Archive: data}, nil
}

func (c *Charts) index(ctx context.Context, repoURL string) (*repo.IndexFile, error) {
	key := NormalizeURL(repoURL)
	c.mu.Lock()
	ci, ok := c.indexes[key]
	c.mu.Unlock()
	if ok && time.Since(ci.fetched) < c.opts.IndexTTL {
		return ci.index, nil
	}
	data, err := c.get(ctx, strings.TrimSuffix(repoURL, "/")+"/index.yaml", repoURL)
	if err != nil {
		return nil, err
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.indexes[key] = cachedIndex{index: idx, fetched: time.Now()}
	c.mu.Unlock()
	return idx, nil
}

func parseIndex(data []byte) (*repo.IndexFile, error) {
	idx := &repo.IndexFile{}
	if err := yaml.Unmarshal(data, idx); err != nil {
		return nil, fmt.Errorf("parse index.yaml: %w", err)
	}
	if idx.APIVersion == "" {
		return nil, fmt.Errorf("parse index.yaml: no apiVersion")
	}
	idx.SortEntries()
	return idx, nil
}

func resolveChartURL(repoURL, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("bad chart URL %q: %w", ref, err)
	}
	if u.IsAbs() {
		return ref, nil
	}
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return "", err
	}
	return base.ResolveReference(u).String(), nil
}

// get downloads u with the credentials of repoURL.
func (c *Charts) get(ctx context.Context, u, repoURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", RedactURL(u), err)
	}
	if cred := c.credentials(repoURL); cred != nil {
		switch {
		case cred.BearerToken != "":
			req.Header.Set("Authorization", "Bearer "+cred.BearerToken)
		case cred.Username != "" || cred.Password != "":
			req.SetBasicAuth(cred.Username, cred.Password)
		}
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", RedactURL(u), scrubErr(err, u))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", RedactURL(u), resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}

func scrubErr(err error, u string) error {
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), u, RedactURL(u)))
}

func (c *Charts) cachedArchive(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.archives[key]
	return data, ok
}

func (c *Charts) storeArchive(key string, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.archives[key]; ok {
		return
	}
	if len(c.order) >= c.opts.MaxArchives {
		delete(c.archives, c.order[0])
		c.order = c.order[1:]
	}
	c.archives[key] = data
	c.order = append(c.order, key)
}

// fetchMirror serves a chart from a mirror folder: an unpacked chart in
// <dir>/<name>/, or an index.yaml whose archives lie in the folder.
func (c *Charts) fetchMirror(ctx context.Context, dir, name, constraint string) (*FetchedChart, error) {
	if _, err := os.Stat(filepath.Join(dir, name, "Chart.yaml")); err == nil {
		tree, err := ReadDir(ctx, dir)
		if err != nil {
			return nil, err
		}
		version, err := chartVersion(tree, name)
		if err != nil {
			return nil, err
		}
		return &FetchedChart{Version: version, Tree: tree, Dir: name}, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.yaml"))
	if err != nil {
		return nil, fmt.Errorf("mirror %s has neither %s/Chart.yaml nor index.yaml", dir, name)
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, err
	}
	cv, err := idx.Get(name, constraint)
	if err != nil {
		return nil, err
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("version %s has no archive in the mirror index", cv.Version)
	}
	archive, err := os.ReadFile(filepath.Join(dir, path.Base(cv.URLs[0])))
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", dir, err)
	}
	return &FetchedChart{Version: cv.Version, Archive: archive}, nil
}

func chartVersion(tree *Tree, name string) (string, error) {
	data, err := tree.ReadFile(name + "/Chart.yaml")
	if err != nil {
		return "", err
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("%s/Chart.yaml: %w", name, err)
	}
	return meta.Version, nil
}
