package server

import (
	"net/url"
	"path"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ManifestGeneratePathsAnnotation limits webhook refreshes to pushes that
// change files under these `;`-separated paths (relative to each source's
// path, or from the repository root when they start with `/`).
const ManifestGeneratePathsAnnotation = "argocd.argoproj.io/manifest-generate-paths"

// NormalizeRepoURL returns a key under which URLs of one Git repository are
// equal: host and path in lower case, without scheme, user, port, `.git`
// suffix or trailing slash; the scp-like `git@host:org/repo` becomes
// `host/org/repo`. It matches what Argo CD's webhook regexp accepts.
func NormalizeRepoURL(raw string) string {
	s := strings.TrimSpace(raw)
	var host, p string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return strings.ToLower(s)
		}
		host, p = u.Hostname(), u.Path
	} else {
		host, p = splitSCP(s)
	}
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	p = strings.TrimRight(p, "/")
	return strings.ToLower(host + "/" + p)
}

// splitSCP splits `[user@]host:path` or a scheme-less `host/path`.
func splitSCP(s string) (host, p string) {
	colon, slash := strings.Index(s, ":"), strings.Index(s, "/")
	switch {
	case colon >= 0 && (slash < 0 || colon < slash):
		host, p = s[:colon], s[colon+1:]
	case slash >= 0:
		host, p = s[:slash], s[slash:]
	default:
		host = s
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	return host, p
}

// sameRepo reports whether an app's repoURL names one of the pushed
// repository's keys. Like Argo CD it accepts an `ssh.` or `altssh.` host
// prefix on the app's side (GitHub's SSH-over-443 hosts).
func sameRepo(appURL string, pushed map[string]bool) bool {
	key := NormalizeRepoURL(appURL)
	if pushed[key] {
		return true
	}
	for _, prefix := range []string{"ssh.", "altssh."} {
		if rest, ok := strings.CutPrefix(key, prefix); ok && pushed[rest] {
			return true
		}
	}
	return false
}

// parseRevision drops the `refs/heads/` or `refs/tags/` of a ref, as Argo
// CD's ParseRevision does (it keeps what follows the second slash).
func parseRevision(ref string) string {
	parts := strings.SplitN(ref, "/", 3)
	return parts[len(parts)-1]
}

// revisionMatches reports whether a push of revision (a branch or tag name)
// changes what targetRevision points at. HEAD and "" follow the default
// branch, so they match only a push to it.
func revisionMatches(targetRevision, revision string, touchedHead bool) bool {
	target := parseRevision(targetRevision)
	if target == "HEAD" || target == "" {
		return touchedHead
	}
	if strings.HasPrefix(targetRevision, "refs/heads/") || strings.HasPrefix(targetRevision, "refs/tags/") {
		return target == revision
	}
	return targetRevision == revision
}

// refreshPaths are the repository paths an app's refresh depends on, from
// ManifestGeneratePathsAnnotation; none means every push counts.
func refreshPaths(app *v1alpha1.Application) []string {
	val := app.Annotations[ManifestGeneratePathsAnnotation]
	var paths []string
	for _, item := range strings.Split(val, ";") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case strings.HasPrefix(item, "/"):
			paths = append(paths, path.Clean(item[1:]))
		default:
			for _, src := range app.Spec.GetSources() {
				paths = append(paths, path.Join(src.Path, item))
			}
		}
	}
	return paths
}

// filesChanged reports whether a changed file lies under (or matches the
// glob of) one of the refresh paths. A push without a file list, or an app
// without refresh paths, always counts.
func filesChanged(paths, changed []string) bool {
	if len(paths) == 0 || len(changed) == 0 {
		return true
	}
	for _, f := range changed {
		f = "/" + strings.TrimPrefix(f, "/")
		for _, p := range paths {
			p = "/" + strings.Trim(p, "/")
			if f == p || p == "/." || strings.HasPrefix(f, p+"/") {
				return true
			}
			if ok, err := path.Match(p, f); err == nil && ok {
				return true
			}
		}
	}
	return false
}
