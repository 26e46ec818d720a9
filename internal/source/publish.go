package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ErrBranchMoved is a push refused because the branch moved since it was
// read: the writer reads it again and retries.
var ErrBranchMoved = errors.New("the branch moved since it was read")

// PublishOptions say how a branch is opened for writing.
type PublishOptions struct {
	// From is the branch a missing branch starts at (the branch itself
	// when empty). When From is missing too, it is created as an orphan
	// holding one empty commit, "Initial commit for <From>", pushed at
	// once.
	From string
	// Notes is a notes ref (refs/notes/...) read with the branch, for
	// Note.
	Notes string
	// Credential pushes; nil uses the repository's read credentials.
	Credential *RepoCredential
	// Author is the author and committer of the commits written.
	Author object.Signature
}

// Branch is a branch of a repository read into memory to be written:
// files are read from its head's tree and commits pushed to it, never
// forced. It is not safe for concurrent use.
type Branch struct {
	name, display string
	url           string
	remote        *git.Remote
	repo          *git.Repository
	auth          transport.AuthMethod
	cred          *RepoCredential
	insecure      bool
	opts          PublishOptions
	head          plumbing.Hash
	tree          *object.Tree
	notes         plumbing.Hash // zero when the notes ref does not exist
}

// OpenBranch reads branch of the Git repository at repoURL (a remote, or
// a local Git repository) into memory.
func (r *Repos) OpenBranch(ctx context.Context, repoURL, branch string, o PublishOptions) (*Branch, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return nil, err
	}
	url := loc.url
	if loc.kind == locFolder {
		return nil, fmt.Errorf("repository %s is a folder, not a Git repository: nothing can be committed to it", loc.display)
	}
	if loc.kind == locLocalGit {
		url = loc.path
	}
	ra, err := r.auth(loc)
	if err != nil {
		return nil, err
	}
	cred := o.Credential
	if cred == nil {
		cred = ra.cred
	}
	auth, err := cred.gitAuth(url, ra.hosts)
	if err != nil {
		return nil, err
	}
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: originRemote, URLs: []string{url}})
	if err != nil {
		return nil, err
	}
	b := &Branch{name: branch, display: loc.display, url: url, remote: remote, repo: repo, auth: auth, cred: cred, insecure: cred.insecure(), opts: o}
	if b.opts.From == "" {
		b.opts.From = branch
	}
	if err := b.read(ctx); err != nil {
		return nil, b.redact(err)
	}
	return b, nil
}

// read fetches the branch (else From, else creates From) and the notes.
func (b *Branch) read(ctx context.Context) error {
	list, err := b.remote.ListContext(ctx, &git.ListOptions{Auth: b.auth, InsecureSkipTLS: b.insecure})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return fmt.Errorf("list refs: %w", err)
	}
	found := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, ref := range list {
		found[ref.Name()] = ref.Hash()
	}
	want := []plumbing.ReferenceName{plumbing.NewBranchReferenceName(b.name), plumbing.NewBranchReferenceName(b.opts.From)}
	if b.opts.Notes != "" {
		want = append(want, plumbing.ReferenceName(b.opts.Notes))
	}
	var specs []config.RefSpec
	for _, name := range want {
		if _, ok := found[name]; ok {
			specs = append(specs, config.RefSpec(fmt.Sprintf("+%s:%s", name, name)))
		}
	}
	if len(specs) > 0 {
		err := b.repo.FetchContext(ctx, &git.FetchOptions{RemoteName: originRemote, RefSpecs: specs, Auth: b.auth, Tags: git.NoTags, InsecureSkipTLS: b.insecure})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return fmt.Errorf("fetch: %w", err)
		}
	}
	b.notes = found[plumbing.ReferenceName(b.opts.Notes)]
	head, ok := found[want[0]]
	if !ok {
		head, ok = found[want[1]]
	}
	if !ok {
		if head, err = b.orphan(ctx); err != nil {
			return err
		}
	}
	return b.setHead(head)
}

// orphan pushes an empty first commit to From.
func (b *Branch) orphan(ctx context.Context) (plumbing.Hash, error) {
	empty, err := b.store(&object.Tree{})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sha, err := b.commit(empty, "Initial commit for "+b.opts.From, plumbing.ZeroHash)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return sha, b.push(ctx, plumbing.NewBranchReferenceName(b.opts.From), sha)
}

func (b *Branch) setHead(h plumbing.Hash) error {
	c, err := b.repo.CommitObject(h)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("read the tree of %s: %w", h, err)
	}
	b.head, b.tree = h, tree
	return nil
}

// Head is the commit the branch is at (or starts from).
func (b *Branch) Head() string { return b.head.String() }

// Read returns the file at a slash path of the head's tree, if there is
// one.
func (b *Branch) Read(path string) ([]byte, bool, error) {
	return readFile(b.tree, path)
}

func readFile(tree *object.Tree, path string) ([]byte, bool, error) {
	f, err := tree.File(path)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = rd.Close() }()
	data, err := io.ReadAll(rd)
	return data, err == nil, err
}

// Commit writes files (slash paths to contents) over the head's tree as
// one commit with message and pushes it to the branch. ErrBranchMoved
// says the branch moved meanwhile.
func (b *Branch) Commit(ctx context.Context, files map[string][]byte, message string) (string, error) {
	tree, err := writeTree(b.repo.Storer, b.tree, files)
	if err != nil {
		return "", err
	}
	sha, err := b.commit(tree, message, b.head)
	if err != nil {
		return "", err
	}
	if err := b.push(ctx, plumbing.NewBranchReferenceName(b.name), sha); err != nil {
		return "", b.redact(err)
	}
	return sha.String(), b.setHead(sha)
}

// Note attaches content to commit target in the notes ref, as `git notes
// add -f` does, and pushes the notes.
func (b *Branch) Note(ctx context.Context, target string, content []byte) error {
	if b.opts.Notes == "" {
		return errors.New("no notes ref was opened")
	}
	var base *object.Tree
	if !b.notes.IsZero() {
		c, err := b.repo.CommitObject(b.notes)
		if err != nil {
			return fmt.Errorf("read %s: %w", b.opts.Notes, err)
		}
		if base, err = c.Tree(); err != nil {
			return err
		}
	}
	tree, err := writeTree(b.repo.Storer, base, map[string][]byte{target: content})
	if err != nil {
		return err
	}
	sha, err := b.commit(tree, "Notes added by 'git notes add'", b.notes)
	if err != nil {
		return err
	}
	if err := b.push(ctx, plumbing.ReferenceName(b.opts.Notes), sha); err != nil {
		return b.redact(err)
	}
	b.notes = sha
	return nil
}

// ReadNote returns the note on commit target, if there is one.
func (b *Branch) ReadNote(target string) ([]byte, bool, error) {
	if b.notes.IsZero() {
		return nil, false, nil
	}
	c, err := b.repo.CommitObject(b.notes)
	if err != nil {
		return nil, false, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, false, err
	}
	return readFile(tree, target)
}

func (b *Branch) commit(tree plumbing.Hash, message string, parent plumbing.Hash) (plumbing.Hash, error) {
	sig := b.opts.Author
	if sig.When.IsZero() {
		sig.When = time.Now()
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	return b.store(c)
}

type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func (b *Branch) store(o encoder) (plumbing.Hash, error) {
	enc := b.repo.Storer.NewEncodedObject()
	if err := o.Encode(enc); err != nil {
		return plumbing.ZeroHash, err
	}
	return b.repo.Storer.SetEncodedObject(enc)
}

// push moves ref to sha on the remote, never forced.
func (b *Branch) push(ctx context.Context, ref plumbing.ReferenceName, sha plumbing.Hash) error {
	if err := b.repo.Storer.SetReference(plumbing.NewHashReference(ref, sha)); err != nil {
		return err
	}
	err := b.remote.PushContext(ctx, &git.PushOptions{
		RemoteName: originRemote, RefSpecs: []config.RefSpec{config.RefSpec(fmt.Sprintf("%s:%s", ref, ref))},
		Auth: b.auth, InsecureSkipTLS: b.insecure,
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, git.ErrNonFastForwardUpdate), strings.Contains(err.Error(), "non-fast-forward"),
		strings.Contains(err.Error(), "fetch first"), strings.Contains(err.Error(), "cannot lock ref"),
		strings.Contains(err.Error(), "failed to update ref"), strings.Contains(err.Error(), "incorrect old value"):
		return fmt.Errorf("push %s to %s: %w", ref.Short(), b.display, ErrBranchMoved)
	}
	return fmt.Errorf("push %s: %w", ref.Short(), err)
}

func (b *Branch) redact(err error) error {
	msg := strings.ReplaceAll(err.Error(), b.url, b.display) + authHint(err)
	return &redactedError{msg: b.cred.scrub(msg), err: err}
}

// CommitInfo is what a commit says of itself.
type CommitInfo struct {
	// Author is "Name <email>".
	Author  string
	Date    time.Time
	Message string
}

// CommitInfo reads commit sha of the Git repository at repoURL (fetched
// before, as Resolve does).
func (r *Repos) CommitInfo(ctx context.Context, repoURL, sha string) (CommitInfo, error) {
	loc, err := r.locate(repoURL)
	if err != nil {
		return CommitInfo{}, err
	}
	if loc.kind == locFolder {
		return CommitInfo{}, fmt.Errorf("repository %s is a folder, not a Git repository: it has no commits", loc.display)
	}
	g, err := r.repo(loc)
	if err != nil {
		return CommitInfo{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, c, err := g.commitLocked(sha)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s of %s: %w", sha, loc.display, err)
	}
	return CommitInfo{Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email), Date: c.Author.When, Message: c.Message}, nil
}
