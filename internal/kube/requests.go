package kube

import (
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// RequestCounter is told the verb and resource of every request a client
// makes, as the API server's apiserver_request_total names them.
type RequestCounter func(verb, resource string)

// CountRequests makes every client built from cfg (and from copies made
// after this call) tell count about each request it sends.
func CountRequests(cfg *rest.Config, count RequestCounter) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, count: count}
	})
}

type countingTransport struct {
	next  http.RoundTripper
	count RequestCounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.count(RequestKind(req.Method, req.URL))
	return t.next.RoundTrip(req)
}

// namespaceSubresources are the subresources of a Namespace, which the
// API server tells from a namespaced resource's name.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// RequestKind classifies a request as the API server does: verb get, list,
// watch, create, update, patch, delete or deletecollection, and the
// resource with its subresource (applications/status); a path that names
// no resource (discovery, OpenAPI, /version) is "nonresource".
func RequestKind(method string, u *url.URL) (verb, resource string) {
	parts, ok := resourceParts(u.Path)
	if !ok {
		return strings.ToLower(method), "nonresource"
	}
	name := ""
	resource = parts[0]
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case u.Query().Get("watch") == "true" || u.Query().Get("watch") == "1":
			verb = "watch"
		case name != "":
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if name == "" {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource
}

// resourceParts returns resource[/name[/subresource]] of an API path, the
// group, version and namespace taken off.
func resourceParts(path string) ([]string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return nil, false
	}
	if parts[0] == "namespaces" && len(parts) > 2 && !namespaceSubresources[parts[2]] {
		parts = parts[2:]
	}
	return parts, true
}
