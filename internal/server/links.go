package server

import (
	"net/url"
	"sort"
	"strings"
)

// linkAnnotationPrefix starts Argo CD's external-link annotations:
// link.argocd.argoproj.io/<title>: <URL>.
const linkAnnotationPrefix = "link.argocd.argoproj.io/"

// externalLink is a link the app page shows.
type externalLink struct {
	Title, URL string
}

// externalLinks are the link annotations whose value is an absolute http
// or https URL, sorted by title. Any other value (javascript:, data:,
// vbscript:, a relative or malformed URL) is left out: whoever opens the
// page would follow it with their session, so an annotation written in Git
// must not become script in the UI (stored cross-site scripting).
func externalLinks(annotations map[string]string) []externalLink {
	var out []externalLink
	for k, v := range annotations {
		title, ok := strings.CutPrefix(k, linkAnnotationPrefix)
		if !ok || title == "" {
			continue
		}
		if u, ok := safeURL(v); ok {
			out = append(out, externalLink{Title: title, URL: u})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Title < out[j].Title })
	return out
}

// safeURL returns raw as a URL when it is an absolute http or https URL
// with a host.
func safeURL(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	return u.String(), true
}
