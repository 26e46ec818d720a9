package scm

import "errors"

// Repository is one branch of a repository: the SCM provider
// generator's parameter set before filtering.
type Repository struct {
	Organization string
	Name         string
	// URL is the clone URL the clone protocol picks.
	URL    string
	Branch string
	SHA    string
	// Labels are the repository's topics.
	Labels   []string
	ID       int64
	Archived bool
}

// PullRequest is one open pull request.
type PullRequest struct {
	Number       int
	Title        string
	Branch       string
	TargetBranch string
	HeadSHA      string
	Author       string
	Labels       []string
}

// ErrRepositoryNotFound is a repository the service does not know (or
// does not show to the token).
var ErrRepositoryNotFound = errors.New("repository not found")

// RepositoryOptions say which repositories and branches are listed.
type RepositoryOptions struct {
	// CloneProtocol is "ssh" (the default) or "https".
	CloneProtocol string
	// AllBranches lists every branch, not only the default one.
	AllBranches bool
	// ExcludeArchived leaves archived repositories out.
	ExcludeArchived bool
}
