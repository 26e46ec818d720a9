package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/project"
	"github.com/wavecd/wavecd/internal/rbac"
)

// appWriteRoutes are the calls that create and change apps.
func (a *API) appWriteRoutes() {
	m := a.mux
	m.HandleFunc("POST /api/v1/applications", a.authed(a.createApp))
	m.HandleFunc("PUT /api/v1/applications/{name}", a.authed(a.updateApp))
	m.HandleFunc("PUT /api/v1/applications/{name}/spec", a.authed(a.updateSpec))
	m.HandleFunc("PATCH /api/v1/applications/{name}", a.authed(a.patchApp))
	m.HandleFunc("DELETE /api/v1/applications/{name}/operation", a.authed(a.terminateOperation))
}

// errSpecDiffers is Argo CD's refusal to create over a different app.
var errSpecDiffers = errors.New("existing application spec is different, use upsert flag to force update")

// boolParam reads a query parameter that is true or false.
func boolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("invalid %s %q: use true or false", name, v)
	}
	return b, nil
}

// createApp is POST /api/v1/applications?upsert=&validate=, the body the
// Application. An app that exists with the same spec, labels, annotations
// and finalizers is returned as it is; a different one is replaced only
// with upsert=true and the update right.
func (a *API) createApp(w http.ResponseWriter, r *http.Request, s *session) {
	upsert, err := boolParam(r, "upsert", false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	validate, err := boolParam(r, "validate", true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	u, app, status, err := a.decodeNewApp(r)
	if err != nil {
		writeError(w, status, err)
		return
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionCreate, a.appObject(app)) {
		writeError(w, http.StatusForbidden, permissionDenied(rbac.ResourceApplications, rbac.ActionCreate, a.appObject(app), s))
		return
	}
	if status, err := a.validateApp(r.Context(), app, validate); err != nil {
		writeError(w, status, err)
		return
	}
	c := a.appClientIn(s, app.Namespace)
	if live, err := c.GetRaw(r.Context(), app.Name); err == nil && !appclient.SameDeclaration(live, u) {
		if !upsert {
			writeError(w, http.StatusBadRequest, errSpecDiffers)
			return
		}
		if !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionUpdate, a.appObject(app)) {
			writeError(w, http.StatusForbidden, permissionDenied(rbac.ResourceApplications, rbac.ActionUpdate, a.appObject(app), s))
			return
		}
	}
	if _, err := (&appclient.Create{Client: c, Apps: []*unstructured.Unstructured{u}, Upsert: upsert}).Run(r.Context()); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	a.writeApp(w, r, s, app.Namespace, app.Name)
}

// decodeNewApp reads a request's Application: its namespace defaults to
// the control namespace and must be served; its project to default.
func (a *API) decodeNewApp(r *http.Request) (*unstructured.Unstructured, *v1alpha1.Application, int, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if err := decodeJSON(r, &u.Object); err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	if u.GetName() == "" {
		return nil, nil, http.StatusBadRequest, errors.New("the application has no metadata.name")
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(a.opts.Namespace)
	}
	if !a.namespaces().Enabled(u.GetNamespace()) {
		return nil, nil, http.StatusForbidden, application.NamespaceNotEnabledError(u.GetNamespace())
	}
	if p, _, _ := unstructured.NestedString(u.Object, "spec", "project"); p == "" {
		_ = unstructured.SetNestedField(u.Object, appclient.DefaultProject, "spec", "project")
	}
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, app); err != nil {
		return nil, nil, http.StatusBadRequest, fmt.Errorf("application %q: %w", u.GetName(), err)
	}
	return u, app, 0, nil
}

// validateApp checks an app against its project, as Argo CD does before
// it writes one: the project exists and takes apps from the app's
// namespace, and, with full, permits its sources and destination.
func (a *API) validateApp(ctx context.Context, app *v1alpha1.Application, full bool) (int, error) {
	proj := &v1alpha1.AppProject{}
	err := a.opts.Kube.Get(ctx, client.ObjectKey{Namespace: a.opts.Namespace, Name: app.Spec.Project}, proj)
	if apierrors.IsNotFound(err) {
		return http.StatusBadRequest, fmt.Errorf("application references project %s which does not exist", app.Spec.Project)
	}
	if err != nil {
		return http.StatusInternalServerError, fmt.Errorf("read AppProject %s: %w", app.Spec.Project, err)
	}
	if app.Namespace != a.opts.Namespace && !a.namespaces().ProjectPermits(proj, app.Namespace) {
		return http.StatusForbidden, application.ProjectNotPermittedError(app, proj.Name)
	}
	if !full {
		return 0, nil
	}
	dest, err := cluster.Registry{Reader: a.opts.Kube, Namespace: a.opts.Namespace}.Resolve(ctx, app.Spec.Destination)
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("application spec for %s is invalid: InvalidSpecError: %w", app.Name, err)
	}
	if problems := project.Check(proj, app, dest); len(problems) > 0 {
		return http.StatusBadRequest, fmt.Errorf("application spec for %s is invalid: InvalidSpecError: %s", app.Name, strings.Join(problems, "; "))
	}
	return 0, nil
}

// writeApp answers with the app as the API server has it now.
func (a *API) writeApp(w http.ResponseWriter, r *http.Request, s *session, ns, name string) {
	raw, err := a.appClientIn(s, ns).GetRaw(r.Context(), name)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, cleanApp(raw))
}

// updateApp is PUT /api/v1/applications/{name}?validate=: the body's
// spec, labels, annotations and finalizers replace the app's.
func (a *API) updateApp(w http.ResponseWriter, r *http.Request, s *session) {
	validate, err := boolParam(r, "validate", true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	u, want, status, err := a.decodeNewApp(r)
	if err != nil {
		writeError(w, status, err)
		return
	}
	if want.Name != r.PathValue("name") {
		writeError(w, http.StatusBadRequest, fmt.Errorf("the body names application %q, the path %q", want.Name, r.PathValue("name")))
		return
	}
	a.changeApp(w, r, s, validate, func(live *unstructured.Unstructured) error {
		live.Object["spec"] = u.Object["spec"]
		live.SetLabels(u.GetLabels())
		live.SetAnnotations(u.GetAnnotations())
		live.SetFinalizers(u.GetFinalizers())
		return nil
	}, false)
}

// updateSpec is PUT /api/v1/applications/{name}/spec?validate=, the body
// the spec; it answers with the spec written (`argocd app set`).
func (a *API) updateSpec(w http.ResponseWriter, r *http.Request, s *session) {
	validate, err := boolParam(r, "validate", true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	spec := map[string]any{}
	if err := decodeJSON(r, &spec); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	a.changeApp(w, r, s, validate, func(live *unstructured.Unstructured) error {
		if p, _ := spec["project"].(string); p == "" {
			spec["project"] = appclient.DefaultProject
		}
		live.Object["spec"] = spec
		return nil
	}, true)
}

// patchRequest is Argo CD's ApplicationPatchRequest.
type patchRequest struct {
	Patch     string `json:"patch"`
	PatchType string `json:"patchType"`
}

// patchApp is PATCH /api/v1/applications/{name}: a JSON patch
// (patchType json) or a JSON merge patch (merge) of the app; its spec,
// labels, annotations and finalizers are written.
func (a *API) patchApp(w http.ResponseWriter, r *http.Request, s *session) {
	var req patchRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if req.PatchType != "json" && req.PatchType != "merge" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("Patch type '%s' is not supported", req.PatchType)) //nolint:staticcheck // Argo CD's message
		return
	}
	a.changeApp(w, r, s, true, func(live *unstructured.Unstructured) error {
		return applyPatch(live, req)
	}, false)
}

// applyPatch patches live's spec, labels, annotations and finalizers.
func applyPatch(live *unstructured.Unstructured, req patchRequest) error {
	orig, err := json.Marshal(live.Object)
	if err != nil {
		return err
	}
	var out []byte
	if req.PatchType == "json" {
		p, err := jsonpatch.DecodePatch([]byte(req.Patch))
		if err != nil {
			return fmt.Errorf("invalid JSON patch: %w", err)
		}
		out, err = p.Apply(orig)
		if err != nil {
			return fmt.Errorf("apply the JSON patch: %w", err)
		}
	} else if out, err = jsonpatch.MergePatch(orig, []byte(req.Patch)); err != nil {
		return fmt.Errorf("apply the merge patch: %w", err)
	}
	patched := &unstructured.Unstructured{}
	if err := json.Unmarshal(out, &patched.Object); err != nil {
		return fmt.Errorf("the patched application is not an object: %w", err)
	}
	live.Object["spec"] = patched.Object["spec"]
	live.SetLabels(patched.GetLabels())
	live.SetAnnotations(patched.GetAnnotations())
	live.SetFinalizers(patched.GetFinalizers())
	return nil
}

// changeApp reads the app of the path (update right), changes it with
// edit, validates it against its project (its sources and destination
// too with full) and writes it, retrying on conflicts. It answers with
// the app, or its spec with specOnly. Moving an app to another project
// needs the update right in both.
func (a *API) changeApp(w http.ResponseWriter, r *http.Request, s *session, full bool, edit func(*unstructured.Unstructured) error, specOnly bool) {
	app, _, enf := a.authorizedApp(w, r, s, rbac.ActionUpdate)
	if app == nil {
		return
	}
	c := a.appClientIn(s, app.Namespace)
	var written *unstructured.Unstructured
	status := http.StatusBadRequest
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := c.GetRaw(r.Context(), app.Name)
		if err != nil {
			status = statusOf(err)
			return err
		}
		if err := edit(live); err != nil {
			return err
		}
		changed := &v1alpha1.Application{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, changed); err != nil {
			return fmt.Errorf("application %q: %w", app.Name, err)
		}
		if changed.Spec.Project != app.Spec.Project && !enf.Allowed(s.subject(), rbac.ResourceApplications, rbac.ActionUpdate, a.appObject(changed)) {
			status = http.StatusForbidden
			return permissionDenied(rbac.ResourceApplications, rbac.ActionUpdate, a.appObject(changed), s)
		}
		if st, err := a.validateApp(r.Context(), changed, full); err != nil {
			status = st
			return err
		}
		if err := a.opts.Kube.Update(r.Context(), live); err != nil {
			status = statusOf(err)
			return err
		}
		written = live
		return nil
	})
	if err != nil {
		writeError(w, status, err)
		return
	}
	if specOnly {
		writeJSON(w, http.StatusOK, written.Object["spec"])
		return
	}
	writeJSON(w, http.StatusOK, cleanApp(written))
}

// terminateOperation is DELETE /api/v1/applications/{name}/operation
// (`argocd app terminate-op`): the running operation's phase becomes
// Terminating, and the controller ends it.
func (a *API) terminateOperation(w http.ResponseWriter, r *http.Request, s *session) {
	app, _, _ := a.authorizedApp(w, r, s, rbac.ActionSync)
	if app == nil {
		return
	}
	if err := (&appclient.Terminate{Client: a.appClientIn(s, app.Namespace), Name: app.Name}).Run(r.Context()); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	slog.InfoContext(r.Context(), "operation terminated", "app", a.appObject(app), "user", s.username())
	writeJSON(w, http.StatusOK, map[string]any{})
}
