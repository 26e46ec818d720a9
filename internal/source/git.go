package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sync/singleflight"
)

// originRemote is the remote of the repositories this package clones.
const originRemote = "origin"

// fetchRefSpecs mirror every branch and tag of the remote.
var fetchRefSpecs = []config.RefSpec{
	"+refs/heads/*:refs/remotes/origin/*",
	"+refs/tags/*:refs/tags/*",
}

// gitRepo is one repository: a bare clone in the cache for a remote URL, or
// a local Git repository read in place.
type gitRepo struct {
	loc location
	dir string // bare clone (remote only)

	mu   sync.Mutex // go-git repositories are not safe for concurrent use
	repo *git.Repository
	// stamp and refs are a local repository's refs when last read, reused
	// while refsStamp is unchanged; refs are a remote's when last listed.
	stamp string
	refs  remoteRefs
	// checked is when refs were last listed or found current (a local
	// stamp unchanged): a commit of a local repository is read without
	// looking again within recheckAfter, and a resolution with a MaxAge
	// reuses refs checked within it.
	checked time.Time
	// fetched are commits found in a remote's mirror: fetches add objects
	// and nothing here removes any, so a commit once there stays. Reading
	// a commit from the packfile to resolve its own hash was a fiftieth of
	// a bootstrap's CPU.
	fetched map[string]bool
}

// fetchedMax bounds gitRepo.fetched: past it the set starts again.
const fetchedMax = 1024

// remoteRefs is what one ls-remote told: ref name to commit, peeled.
type remoteRefs map[string]plumbing.Hash

// remoteAuth is how a remote repository is reached: its credentials (nil
// for none) and the SSH known hosts (nil for go-git's default files).
type remoteAuth struct {
	cred  *RepoCredential
	hosts *knownHosts
}

// resolveArgs are how one resolution reaches the repository.
type resolveArgs struct {
	auth   remoteAuth
	flight *singleflight.Group
	// maxAge is how old the refs last listed may be (ResolveOptions).
	maxAge time.Duration
}

func (g *gitRepo) resolve(ctx context.Context, rev string, a resolveArgs) (string, error) {
	if g.loc.kind == locLocalGit {
		return g.resolveLocal(rev, a.maxAge)
	}
	if isFullSHA(rev) && g.hasCommit(rev) {
		return strings.ToLower(rev), nil
	}
	if refs := g.listedWithin(a.maxAge); refs != nil {
		if h, ok := matchRef(refs, rev); ok {
			return h.String(), nil
		}
	}
	v, err, _ := a.flight.Do(g.loc.key, func() (any, error) { return g.update(ctx, a.auth) })
	if err != nil {
		return "", err
	}
	if h, ok := matchRef(v.(remoteRefs), rev); ok {
		return h.String(), nil
	}
	if isHex(rev) {
		return g.findCommit(rev)
	}
	return "", fmt.Errorf("no branch, tag or commit named %q", rev)
}

// listedWithin returns the remote's refs as last listed, when that was
// no longer ago than maxAge; nil otherwise.
func (g *gitRepo) listedWithin(maxAge time.Duration) remoteRefs {
	g.mu.Lock()
	defer g.mu.Unlock()
	if maxAge <= 0 || g.refs == nil || time.Since(g.checked) > maxAge {
		return nil
	}
	return g.refs
}

// update lists the remote's refs and fetches when any of them is missing
// locally, so an unchanged remote costs one round trip.
func (g *gitRepo) update(ctx context.Context, a remoteAuth) (remoteRefs, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo, err := g.openRemoteLocked()
	if err != nil {
		return nil, err
	}
	auth, err := a.cred.gitAuth(g.loc.url, a.hosts)
	if err != nil {
		return nil, err
	}
	remote, err := repo.Remote(originRemote)
	if err != nil {
		return nil, err
	}
	list, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled, InsecureSkipTLS: a.cred.insecure()})
	if err != nil {
		return nil, g.redact(fmt.Errorf("list refs: %w", err), a.cred)
	}
	refs := peel(list)
	if !g.haveAll(repo, refs) {
		err := repo.FetchContext(ctx, &git.FetchOptions{RemoteName: originRemote, RefSpecs: fetchRefSpecs, Auth: auth, Force: true, Tags: git.NoTags, InsecureSkipTLS: a.cred.insecure()})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil, g.redact(fmt.Errorf("fetch: %w", err), a.cred)
		}
	}
	g.refs, g.checked = refs, time.Now()
	return refs, nil
}

func (g *gitRepo) haveAll(repo *git.Repository, refs remoteRefs) bool {
	for _, h := range refs {
		if repo.Storer.HasEncodedObject(h) != nil {
			return false
		}
	}
	return true
}

// peel turns an ls-remote listing into ref -> commit: annotated tags are
// replaced by the commit they point to, HEAD by its target.
func peel(list []*plumbing.Reference) remoteRefs {
	refs := remoteRefs{}
	symbolic := map[string]string{}
	for _, ref := range list {
		name := ref.Name().String()
		if ref.Type() == plumbing.SymbolicReference {
			symbolic[name] = ref.Target().String()
			continue
		}
		refs[name] = ref.Hash()
	}
	for name, h := range refs {
		if base, ok := strings.CutSuffix(name, "^{}"); ok {
			refs[base] = h
			delete(refs, name)
		}
	}
	for name, target := range symbolic {
		if h, ok := refs[target]; ok {
			refs[name] = h
		}
	}
	return refs
}

// matchRef finds rev among refs the way git does for a fetch: HEAD, a full
// ref name, a branch, then a tag.
func matchRef(refs remoteRefs, rev string) (plumbing.Hash, bool) {
	if rev == "" || rev == "HEAD" {
		h, ok := refs["HEAD"]
		return h, ok
	}
	for _, name := range []string{rev, "refs/heads/" + rev, "refs/tags/" + rev, "refs/remotes/origin/" + rev} {
		if h, ok := refs[name]; ok {
			return h, true
		}
	}
	return plumbing.ZeroHash, false
}

func (g *gitRepo) openRemoteLocked() (*git.Repository, error) {
	if g.repo != nil {
		return g.repo, nil
	}
	repo, err := git.PlainOpen(g.dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			return nil, err
		}
		repo, err = git.PlainInit(g.dir, true)
		if err == nil {
			_, err = repo.CreateRemote(&config.RemoteConfig{Name: originRemote, URLs: []string{g.loc.url}})
		}
	}
	if err != nil {
		return nil, g.redact(fmt.Errorf("open cache %s: %w", g.dir, err), nil)
	}
	g.repo = repo
	return repo, nil
}

// openLocked returns the repository to read objects from. A local
// repository is opened again whenever its refs changed, so new commits
// are seen.
func (g *gitRepo) openLocked() (*git.Repository, error) {
	if g.loc.kind == locRemote {
		return g.openRemoteLocked()
	}
	if stamp, ok := refsStamp(g.loc.path); ok && g.repo != nil && stamp == g.stamp {
		g.checked = time.Now()
		return g.repo, nil
	}
	return g.reopenLocked()
}

// recheckAfter is how long a local repository's refs, once found current,
// are trusted for reading a commit.
const recheckAfter = time.Second

func (g *gitRepo) reopenLocked() (*git.Repository, error) {
	repo, err := git.PlainOpenWithOptions(g.loc.path, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", g.loc.display, err)
	}
	g.repo = repo
	return repo, nil
}

func (g *gitRepo) resolveLocal(rev string, maxAge time.Duration) (string, error) {
	refs, err := g.localRefsCached(maxAge)
	if err != nil {
		return "", err
	}
	if h, ok := matchRef(refs, rev); ok {
		return h.String(), nil
	}
	if isFullSHA(rev) && g.hasCommit(strings.ToLower(rev)) {
		return strings.ToLower(rev), nil
	}
	if isHex(rev) {
		return g.findCommit(rev)
	}
	return "", fmt.Errorf("no branch, tag or commit named %q", rev)
}

// localRefsCached returns the refs of a local repository, read again only
// when they changed on disk (the repository is then reopened too, so new
// objects are seen). Refs found current no longer ago than maxAge are
// returned without looking.
func (g *gitRepo) localRefsCached(maxAge time.Duration) (remoteRefs, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if maxAge > 0 && g.refs != nil && g.stamp != "" && time.Since(g.checked) <= maxAge {
		return g.refs, nil
	}
	stamp, ok := refsStamp(g.loc.path)
	if ok && g.refs != nil && stamp == g.stamp {
		g.checked = time.Now()
		return g.refs, nil
	}
	repo, err := g.reopenLocked()
	if err != nil {
		return nil, err
	}
	refs, err := localRefs(repo)
	if err != nil {
		return nil, err
	}
	g.stamp, g.refs = "", nil
	if ok {
		g.stamp, g.refs, g.checked = stamp, refs, time.Now()
	}
	return refs, nil
}

// localRefs lists the refs of a local repository, peeled to commits.
func localRefs(repo *git.Repository) (remoteRefs, error) {
	refs := remoteRefs{}
	iter, err := repo.References()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		resolved, err := repo.Reference(ref.Name(), true)
		if err != nil {
			return nil //nolint:nilerr // a dangling symbolic ref names nothing
		}
		h := resolved.Hash()
		if tag, err := repo.TagObject(h); err == nil {
			if c, err := tag.Commit(); err == nil {
				h = c.Hash
			}
		}
		refs[ref.Name().String()] = h
		return nil
	})
	return refs, err
}

func (g *gitRepo) hasCommit(sha string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fetched[sha] {
		return true
	}
	if _, _, err := g.commitLocked(sha); err != nil {
		return false
	}
	if g.loc.kind == locRemote {
		if g.fetched == nil || len(g.fetched) >= fetchedMax {
			g.fetched = map[string]bool{}
		}
		g.fetched[sha] = true
	}
	return true
}

// commitLocked returns the commit sha names and the repository it was
// read from. A commit never changes: a local repository whose refs were
// found current within recheckAfter is read as it is, without looking at
// them again (the walk of refs/ was a tenth of a bootstrap's CPU).
func (g *gitRepo) commitLocked(sha string) (*git.Repository, *object.Commit, error) {
	if g.loc.kind != locRemote && g.repo != nil && g.stamp != "" && time.Since(g.checked) < recheckAfter {
		if c, err := g.repo.CommitObject(plumbing.NewHash(sha)); err == nil {
			return g.repo, c, nil
		}
	}
	repo, err := g.openLocked()
	if err != nil {
		return nil, nil, err
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return nil, nil, err
	}
	return repo, c, nil
}

// findCommit finds the one commit whose SHA starts with prefix.
func (g *gitRepo) findCommit(prefix string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo, err := g.openLocked()
	if err != nil {
		return "", err
	}
	iter, err := repo.CommitObjects()
	if err != nil {
		return "", err
	}
	prefix = strings.ToLower(prefix)
	var found []string
	_ = iter.ForEach(func(c *object.Commit) error {
		if strings.HasPrefix(c.Hash.String(), prefix) {
			found = append(found, c.Hash.String())
		}
		return nil
	})
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no branch, tag or commit named %q", prefix)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("short SHA %q is ambiguous: %d commits match", prefix, len(found))
}

// tree indexes the files of commit sha. Contents are read on demand.
func (g *gitRepo) tree(ctx context.Context, sha string) (*Tree, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo, commit, err := g.commitLocked(sha)
	if err != nil {
		return nil, err
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	files, err := indexTree(ctx, repo, root)
	if err != nil {
		return nil, err
	}
	read := func(e *entry) ([]byte, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return readBlob(repo, plumbing.NewHash(e.key))
	}
	return newTree(sha, files, read), nil
}

func indexTree(ctx context.Context, repo *git.Repository, root *object.Tree) (map[string]*entry, error) {
	files := map[string]*entry{}
	walker := object.NewTreeWalker(root, true, nil)
	defer walker.Close()
	for {
		name, te, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch te.Mode {
		case filemode.Dir:
			files[name] = &entry{kind: kindDir}
		case filemode.Symlink:
			target, err := readBlob(repo, te.Hash)
			if err != nil {
				return nil, err
			}
			files[name] = &entry{kind: kindSymlink, target: string(target)}
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			files[name] = &entry{kind: kindFile, key: te.Hash.String(), exec: te.Mode == filemode.Executable}
		default: // submodules and empty entries hold no file
		}
	}
}

func readBlob(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// redact removes credentials that a transport error may quote and says
// what to check when the error is about credentials or host keys.
func (g *gitRepo) redact(err error, cred *RepoCredential) error {
	if err == nil {
		return nil
	}
	msg := strings.ReplaceAll(err.Error(), g.loc.url, g.loc.display) + authHint(err)
	return &redactedError{msg: cred.scrub(msg), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func isHex(s string) bool {
	if len(s) < 4 || len(s) > 40 {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isFullSHA(s string) bool { return len(s) == 40 && isHex(s) }
