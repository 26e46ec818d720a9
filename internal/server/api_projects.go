package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rbac"
)

// projectRoutes are Argo CD's ProjectService paths.
func (a *API) projectRoutes() {
	m := a.mux
	m.HandleFunc("GET /api/v1/projects", a.authed(a.listProjects))
	m.HandleFunc("GET /api/v1/projects/{name}", a.authed(a.getProject))
	m.HandleFunc("GET /api/v1/projects/{name}/detailed", a.authed(a.getDetailedProject))
	m.HandleFunc("POST /api/v1/projects", a.authed(a.createProject))
	m.HandleFunc("PUT /api/v1/projects/{name}", a.authed(a.updateProject))
	m.HandleFunc("DELETE /api/v1/projects/{name}", a.authed(a.deleteProject))
}

var projectGVK = v1alpha1.SchemeGroupVersion.WithKind("AppProject")

func newProject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(projectGVK)
	return u
}

// listProjects is GET /api/v1/projects: the projects the user may get.
func (a *API) listProjects(w http.ResponseWriter, r *http.Request, s *session) {
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("AppProjectList"))
	if err := a.opts.Kube.List(r.Context(), list, client.InNamespace(a.opts.Namespace)); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	items := []map[string]any{}
	for i := range list.Items {
		if enf.Allowed(s.subject(), rbac.ResourceProjects, rbac.ActionGet, list.Items[i].GetName()) {
			items = append(items, cleanApp(&list.Items[i]))
		}
	}
	writeList(w, map[string]any{"resourceVersion": list.GetResourceVersion()}, items)
}

// authorizedProject checks s may do action on the project named, and
// reads it; on failure it writes the error and returns nil.
func (a *API) authorizedProject(w http.ResponseWriter, r *http.Request, s *session, name, action string) *unstructured.Unstructured {
	if a.allowedOr403(w, r, s, rbac.ResourceProjects, action, name) == nil {
		return nil
	}
	u := newProject()
	if err := a.opts.Kube.Get(r.Context(), client.ObjectKey{Namespace: a.opts.Namespace, Name: name}, u); err != nil {
		writeError(w, statusOf(err), err)
		return nil
	}
	return u
}

// getProject is GET /api/v1/projects/{name}.
func (a *API) getProject(w http.ResponseWriter, r *http.Request, s *session) {
	if u := a.authorizedProject(w, r, s, r.PathValue("name"), rbac.ActionGet); u != nil {
		writeJSON(w, http.StatusOK, cleanApp(u))
	}
}

// getDetailedProject is GET /api/v1/projects/{name}/detailed (`argocd
// proj get`): the project, and the repositories and clusters scoped to it.
// wavecd has no global projects.
func (a *API) getDetailedProject(w http.ResponseWriter, r *http.Request, s *session) {
	u := a.authorizedProject(w, r, s, r.PathValue("name"), rbac.ActionGet)
	if u == nil {
		return
	}
	secrets, _, err := a.repoSecrets(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	repos := []repository{}
	for _, sec := range secrets {
		if string(sec.Data["project"]) == u.GetName() {
			repos = append(repos, repository{Repo: string(sec.Data["url"]), Type: string(sec.Data["type"]), Name: string(sec.Data["name"]), Project: u.GetName()})
		}
	}
	all, err := a.clusters().List(r.Context())
	if err != nil && all == nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	clusters := []map[string]any{}
	for _, c := range all {
		if c.Project == u.GetName() {
			clusters = append(clusters, map[string]any{"server": c.Server, "name": c.Name, "project": c.Project})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": cleanApp(u), "globalProjects": []any{}, "repositories": repos, "clusters": clusters})
}

// projectRequest is Argo CD's ProjectCreateRequest and
// ProjectUpdateRequest.
type projectRequest struct {
	Project map[string]any `json:"project"`
	Upsert  bool           `json:"upsert"`
}

// decodeProject reads a request's project and checks its roles' policies
// as Argo CD does.
func (a *API) decodeProject(r *http.Request) (*unstructured.Unstructured, bool, error) {
	var req projectRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, false, err
	}
	if req.Project == nil {
		return nil, false, errors.New("missing payload 'project' in request")
	}
	u := &unstructured.Unstructured{Object: req.Project}
	u.SetGroupVersionKind(projectGVK)
	u.SetNamespace(a.opts.Namespace)
	unstructured.RemoveNestedField(u.Object, "status")
	if u.GetName() == "" {
		return nil, false, errors.New("the project has no metadata.name")
	}
	proj := &v1alpha1.AppProject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, proj); err != nil {
		return nil, false, fmt.Errorf("project %q: %w", u.GetName(), err)
	}
	if _, err := rbac.ProjectPolicy(proj); err != nil {
		return nil, false, fmt.Errorf("policy syntax error: %w", err)
	}
	return u, req.Upsert, nil
}

// createProject is POST /api/v1/projects, the body {"project": ...,
// "upsert": ...}. A project that exists with the same spec is returned;
// a different one is replaced only with upsert and the update right.
func (a *API) createProject(w http.ResponseWriter, r *http.Request, s *session) {
	u, upsert, err := a.decodeProject(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	enf := a.allowedOr403(w, r, s, rbac.ResourceProjects, rbac.ActionCreate, u.GetName())
	if enf == nil {
		return
	}
	err = a.opts.Kube.Create(r.Context(), u)
	if apierrors.IsAlreadyExists(err) {
		err = a.upsertProject(r.Context(), s, enf, u, upsert)
	}
	if err != nil {
		writeError(w, projectStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, cleanApp(u))
}

// errProjectDiffers is Argo CD's refusal to create over a different
// project.
var errProjectDiffers = errors.New("existing project spec is different, use upsert flag to force update")

// upsertProject handles a create of a project that exists; u becomes the
// project as it is afterwards.
func (a *API) upsertProject(ctx context.Context, s *session, enf *rbac.Enforcer, u *unstructured.Unstructured, upsert bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := newProject()
		if err := a.opts.Kube.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(live.Object["spec"], u.Object["spec"]) {
			u.Object = live.Object
			return nil
		}
		if !upsert {
			return errProjectDiffers
		}
		if !enf.Allowed(s.subject(), rbac.ResourceProjects, rbac.ActionUpdate, u.GetName()) {
			return &forbiddenError{permissionDenied(rbac.ResourceProjects, rbac.ActionUpdate, u.GetName(), s)}
		}
		live.Object["spec"] = u.Object["spec"]
		if err := a.opts.Kube.Update(ctx, live); err != nil {
			return err
		}
		u.Object = live.Object
		return nil
	})
}

// forbiddenError is a refusal found deep in a handler: 403.
type forbiddenError struct{ err error }

func (e *forbiddenError) Error() string { return e.err.Error() }

func projectStatus(err error) int {
	var f *forbiddenError
	if errors.As(err, &f) {
		return http.StatusForbidden
	}
	return statusOf(err)
}

// updateProject is PUT /api/v1/projects/{name}, the body {"project": ...}:
// its spec, labels and annotations replace the project's.
func (a *API) updateProject(w http.ResponseWriter, r *http.Request, s *session) {
	u, _, err := a.decodeProject(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if u.GetName() != r.PathValue("name") {
		writeError(w, http.StatusBadRequest, fmt.Errorf("the body names project %q, the path %q", u.GetName(), r.PathValue("name")))
		return
	}
	if live := a.authorizedProject(w, r, s, u.GetName(), rbac.ActionUpdate); live == nil {
		return
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := newProject()
		if err := a.opts.Kube.Get(r.Context(), client.ObjectKeyFromObject(u), live); err != nil {
			return err
		}
		live.Object["spec"] = u.Object["spec"]
		live.SetLabels(u.GetLabels())
		live.SetAnnotations(u.GetAnnotations())
		if err := a.opts.Kube.Update(r.Context(), live); err != nil {
			return err
		}
		u = live
		return nil
	})
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, cleanApp(u))
}

// deleteProject is DELETE /api/v1/projects/{name}. The default project,
// and a project that apps use, are refused, as in Argo CD.
func (a *API) deleteProject(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	if name == "default" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("name '%s' is reserved and cannot be deleted", name))
		return
	}
	u := a.authorizedProject(w, r, s, name, rbac.ActionDelete)
	if u == nil {
		return
	}
	n, err := a.appsOfProject(r.Context(), name)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	if n > 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("project is referenced by %d applications", n))
		return
	}
	if err := a.opts.Kube.Delete(r.Context(), u); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// appsOfProject counts the served apps of project name.
func (a *API) appsOfProject(ctx context.Context, name string) (int, error) {
	apps, err := a.servedApps(ctx)
	n := 0
	for _, app := range apps {
		if app.Spec.Project == name {
			n++
		}
	}
	return n, err
}

// servedApps lists the Applications of every served namespace, reading
// each by name when the patterns name them (a server whose rights stop at
// those namespaces can list them).
func (a *API) servedApps(ctx context.Context) ([]v1alpha1.Application, error) {
	namespaces := a.namespaces().Watch()
	if namespaces == nil {
		namespaces = []string{""}
	}
	var out []v1alpha1.Application
	for _, ns := range namespaces {
		var apps v1alpha1.ApplicationList
		if err := a.opts.Kube.List(ctx, &apps, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list applications: %w", err)
		}
		for _, app := range apps.Items {
			if a.namespaces().Enabled(app.Namespace) {
				out = append(out, app)
			}
		}
	}
	return out, nil
}
