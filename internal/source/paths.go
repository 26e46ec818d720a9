package source

import (
	"fmt"
	"path"
	"strings"
)

// PathError reports a path in a source that cannot be used: it leaves the
// repository root, is absolute where that is not allowed, or goes through a
// symlink that points outside the repository.
type PathError struct {
	// Path is the path as the user wrote it.
	Path string
	// Reason says what is wrong with it.
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path %q %s", e.Path, e.Reason)
}

// Reasons a PathError gives.
const (
	ReasonLeavesRoot    = "leaves the repository root"
	ReasonAbsolute      = "is absolute; use a path relative to the source"
	ReasonSymlinkEscape = "goes through a symlink that points outside the repository"
	ReasonSymlinkLoop   = "goes through too many symlinks"
	ReasonURL           = "is a URL; only files inside the repository are allowed"
)

// JoinOptions tune how Join treats the path it is given.
type JoinOptions struct {
	// AbsoluteFromRoot treats an absolute path as relative to the repository
	// root (Argo CD's rule for Helm value files) instead of refusing it.
	AbsoluteFromRoot bool
}

// Join resolves p against the directory base inside a tree and returns the
// clean slash path relative to the root ("." for the root itself). It does
// not look at the tree: use Tree.Resolve to follow symlinks as well.
func Join(base, p string, opts JoinOptions) (string, error) {
	if strings.Contains(p, "://") {
		return "", &PathError{Path: p, Reason: ReasonURL}
	}
	p = strings.ReplaceAll(p, "\\", "/")
	joined := ""
	switch {
	case path.IsAbs(p) && !opts.AbsoluteFromRoot:
		return "", &PathError{Path: p, Reason: ReasonAbsolute}
	case path.IsAbs(p):
		joined = path.Clean(strings.TrimLeft(p, "/"))
		if escapes(p[1:]) {
			return "", &PathError{Path: p, Reason: ReasonLeavesRoot}
		}
	default:
		joined = path.Join(base, p)
	}
	if escapes(joined) {
		return "", &PathError{Path: p, Reason: ReasonLeavesRoot}
	}
	return path.Clean(joined), nil
}

// escapes reports whether the relative path p climbs above its start.
func escapes(p string) bool {
	depth := 0
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}
