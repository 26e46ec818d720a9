package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ReposOptions configure a Repos cache.
type ReposOptions struct {
	// CacheDir holds one bare clone per remote repository URL. Required
	// when remote repositories are used.
	CacheDir string
	// Mirrors replace repository URLs with local folders or Git repos.
	Mirrors Mirrors
	// Credentials are matched to repository URLs (see Credentials.For);
	// SetCredentials replaces them.
	Credentials Credentials
	// KnownHosts are the SSH host keys trusted for SSH repositories, in
	// known_hosts format (the ssh_known_hosts key of Argo CD's
	// argocd-ssh-known-hosts-cm); SetKnownHosts replaces them. Empty means
	// the files SSH_KNOWN_HOSTS names, else ~/.ssh/known_hosts. Credentials
	// marked insecure skip the host key check.
	KnownHosts string
	// MaxTrees bounds the number of commit trees kept in memory (default 256).
	MaxTrees int
}

// Repos is the cache of Git repositories and their trees. It resolves
// revisions, fetches remote repositories into CacheDir (concurrent callers
// for one repository share one fetch) and hands out one immutable Tree per
// commit. It is safe for concurrent use.
type Repos struct {
	opts   ReposOptions
	flight singleflight.Group
	trees  *treeCache

	mu    sync.Mutex
	repos map[string]*gitRepo // by normalized URL

	authMu   sync.RWMutex
	creds    Credentials
	hosts    *knownHosts
	hostsErr error // why KnownHosts could not be parsed
}

// NewRepos returns a repository cache. Unparsable KnownHosts fail every
// fetch of an SSH repository with the parse error.
func NewRepos(opts ReposOptions) *Repos {
	if opts.MaxTrees <= 0 {
		opts.MaxTrees = 256
	}
	r := &Repos{opts: opts, trees: newTreeCache(opts.MaxTrees), repos: map[string]*gitRepo{}, creds: opts.Credentials}
	r.hosts, r.hostsErr = parseKnownHosts(opts.KnownHosts)
	return r
}

// SetCredentials replaces the repository credentials, e.g. after the
// repository Secrets changed (see CredentialsFromSecrets). The next fetch
// of every repository uses them.
func (r *Repos) SetCredentials(creds Credentials) {
	r.authMu.Lock()
	defer r.authMu.Unlock()
	r.creds = slices.Clone(creds)
}

// SetKnownHosts replaces the SSH known hosts (see ReposOptions.KnownHosts).
// On a parse error the known hosts in use are kept.
func (r *Repos) SetKnownHosts(data string) error {
	hosts, err := parseKnownHosts(data)
	if err != nil {
		return err
	}
	r.authMu.Lock()
	defer r.authMu.Unlock()
	r.hosts, r.hostsErr = hosts, nil
	return nil
}

// auth returns how to reach the remote repository at loc.
func (r *Repos) auth(loc location) (remoteAuth, error) {
	r.authMu.RLock()
	defer r.authMu.RUnlock()
	if r.hostsErr != nil && isSSHURL(loc.url) {
		return remoteAuth{}, fmt.Errorf("repository %s: %w", loc.display, r.hostsErr)
	}
	return remoteAuth{cred: r.creds.For(loc.url), hosts: r.hosts}, nil
}

// Checkout resolves revision in the repository at repoURL and returns its
// tree. A plain folder (a local path or mirror that is not a Git repository)
// ignores revision and returns the folder as it is now.
func (r *Repos) Checkout(ctx context.Context, repoURL, revision string) (*Tree, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return nil, err
	}
	if loc.kind == locFolder {
		return ReadDir(ctx, loc.path)
	}
	if isFullSHA(revision) {
		// A commit read from this repository before is that commit: a
		// comparison pins its revision and checks it out, and need not
		// look the commit up twice.
		if t, ok := r.trees.get(treeKey(loc, strings.ToLower(revision))); ok {
			return t, nil
		}
	}
	sha, err := r.Resolve(ctx, repoURL, revision)
	if err != nil {
		return nil, err
	}
	return r.Tree(ctx, repoURL, sha)
}

// Resolve returns the commit SHA that revision (a branch, tag, full or short
// SHA, HEAD or "") names in the repository at repoURL, fetching the
// repository first when it is remote. A plain folder resolves to "".
func (r *Repos) Resolve(ctx context.Context, repoURL, revision string) (string, error) {
	return r.ResolveWith(ctx, repoURL, revision, ResolveOptions{})
}

// ResolveOptions say how current a resolution must be.
type ResolveOptions struct {
	// MaxAge lets the refs the repository had when last listed (a remote's
	// ls-remote, a local repository's refs on disk) answer when they were
	// listed no longer ago than this: a round of periodic refreshes of the
	// apps of one repository then lists its refs a few times, not once per
	// app. Zero lists them now.
	MaxAge time.Duration
}

// ResolveWith is Resolve with options.
func (r *Repos) ResolveWith(ctx context.Context, repoURL, revision string, opts ResolveOptions) (string, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return "", err
	}
	if loc.kind == locFolder {
		return "", nil
	}
	repo, err := r.repo(loc)
	if err != nil {
		return "", err
	}
	var auth remoteAuth
	if loc.kind == locRemote {
		if auth, err = r.auth(loc); err != nil {
			return "", err
		}
	}
	sha, err := repo.resolve(ctx, revision, resolveArgs{auth: auth, flight: &r.flight, maxAge: opts.MaxAge})
	if err != nil {
		return "", fmt.Errorf("resolve revision %q of %s: %w", displayRevision(revision), loc.display, err)
	}
	slog.DebugContext(ctx, "resolved revision", "repo", loc.display, "revision", revision, "sha", sha)
	return sha, nil
}

// Tree returns the tree of commit sha in the repository at repoURL. The
// commit must have been fetched (Resolve does that).
func (r *Repos) Tree(ctx context.Context, repoURL, sha string) (*Tree, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return nil, err
	}
	key := treeKey(loc, sha)
	if t, ok := r.trees.get(key); ok {
		return t, nil
	}
	repo, err := r.repo(loc)
	if err != nil {
		return nil, err
	}
	t, err := repo.tree(ctx, sha)
	if err != nil {
		return nil, fmt.Errorf("read commit %s of %s: %w", sha, loc.display, err)
	}
	r.trees.put(key, t)
	return t, nil
}

// treeKey names the tree of commit sha read from the repository at loc.
// Trees are kept per repository: a commit of one repository must not be
// handed out for another that was never seen to have it (an app may not
// be allowed to read the first).
func treeKey(loc location, sha string) string { return loc.key + "@" + sha }

func displayRevision(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

type locKind uint8

const (
	locRemote locKind = iota
	locLocalGit
	locFolder
)

// location is where a repository URL is read from.
type location struct {
	kind    locKind
	key     string // normalized URL
	url     string // what go-git fetches from (remote only)
	path    string // local folder or Git repo
	display string // safe to log: no credentials
}

func (r *Repos) locate(repoURL string) (location, error) {
	if repoURL == "" {
		return location{}, fmt.Errorf("repository URL is empty")
	}
	key := NormalizeURL(repoURL)
	loc := location{key: key, display: RedactURL(repoURL)}
	local, isLocal := r.opts.Mirrors.Lookup(repoURL)
	if !isLocal {
		local, isLocal = localPath(repoURL)
	}
	if !isLocal {
		loc.kind, loc.url = locRemote, repoURL
		if r.opts.CacheDir == "" {
			return loc, fmt.Errorf("no cache folder set for remote repository %s", loc.display)
		}
		return loc, nil
	}
	abs, err := filepath.Abs(local)
	if err != nil {
		return loc, fmt.Errorf("repository %s: %w", loc.display, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return loc, fmt.Errorf("repository %s: %w", loc.display, err)
	}
	loc.path, loc.kind = abs, locFolder
	if isGitRepo(abs) {
		loc.kind = locLocalGit
	}
	return loc, nil
}

// localPath returns the folder a file:// URL or a filesystem path names.
func localPath(repoURL string) (string, bool) {
	if p, ok := strings.CutPrefix(repoURL, "file://"); ok {
		return p, true
	}
	if strings.Contains(repoURL, "://") || isSCPLike(repoURL) {
		return "", false
	}
	return repoURL, true
}

// isSCPLike reports git's user@host:path form.
func isSCPLike(u string) bool {
	at, colon := strings.Index(u, "@"), strings.Index(u, ":")
	return at > 0 && colon > at && !strings.Contains(u[:colon], "/")
}

func isGitRepo(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	_, errHead := os.Stat(filepath.Join(dir, "HEAD"))
	_, errObj := os.Stat(filepath.Join(dir, "objects"))
	return errHead == nil && errObj == nil
}

func (r *Repos) repo(loc location) (*gitRepo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g, ok := r.repos[loc.key]; ok {
		return g, nil
	}
	g := &gitRepo{loc: loc}
	if loc.kind == locRemote {
		sum := sha256.Sum256([]byte(loc.key))
		g.dir = filepath.Join(r.opts.CacheDir, "git", hex.EncodeToString(sum[:12]))
	}
	r.repos[loc.key] = g
	return g, nil
}

// treeCache keeps the most recently used trees by treeKey, bounded by
// count.
type treeCache struct {
	mu    sync.Mutex
	max   int
	order []string
	trees map[string]*Tree
}

func newTreeCache(max int) *treeCache {
	return &treeCache{max: max, trees: map[string]*Tree{}}
}

func (c *treeCache) get(sha string) (*Tree, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.trees[sha]
	if ok {
		c.touch(sha)
	}
	return t, ok
}

func (c *treeCache) put(sha string, t *Tree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.trees[sha]; !ok && len(c.trees) >= c.max {
		delete(c.trees, c.order[0])
		c.order = c.order[1:]
	}
	c.trees[sha] = t
	c.touch(sha)
}

func (c *treeCache) touch(sha string) {
	for i, s := range c.order {
		if s == sha {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, sha)
}
