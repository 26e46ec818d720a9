package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rbac"
)

// Renderer renders an app's desired objects at a revision ("" for the
// sources' own), with each source's revision and type;
// compare.Differ is one. The API's Differ serves as its Renderer when it
// is one.
type Renderer interface {
	RenderManifests(ctx context.Context, app *v1alpha1.Application, revision string) ([]*unstructured.Unstructured, []string, []string, error)
}

// manifestResponse is Argo CD's ManifestResponse.
type manifestResponse struct {
	Manifests  []string `json:"manifests"`
	Namespace  string   `json:"namespace"`
	Server     string   `json:"server"`
	Revision   string   `json:"revision"`
	SourceType string   `json:"sourceType"`
}

// getManifests is GET /api/v1/applications/{name}/manifests?revision=
// (`argocd app manifests`, and `argocd app diff`'s desired side): the
// app's rendered objects, one JSON document each, Secrets masked.
func (a *API) getManifests(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, _ := a.authorizedApp(w, r, s, rbac.ActionGet)
	if app == nil {
		return
	}
	renderer, ok := a.opts.Differ.(Renderer)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, errors.New("this server renders no manifests (it has no differ)"))
		return
	}
	objs, revisions, types, err := renderer.RenderManifests(r.Context(), app, r.URL.Query().Get("revision"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	out := manifestResponse{Manifests: []string{}, Namespace: app.Spec.Destination.Namespace, Server: app.Spec.Destination.Server,
		Revision: strings.Join(revisions, ","), SourceType: strings.Join(types, ",")}
	for _, o := range objs {
		b, err := json.Marshal(maskSecret(o).Object)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		out.Manifests = append(out.Manifests, string(b))
	}
	writeJSON(w, http.StatusOK, out)
}
