package server

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"strconv"
	stdsync "sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/rbac"
	"github.com/wavecd/wavecd/internal/source"
)

// repoRoutes are Argo CD's RepositoryService calls for repositories.
func (a *API) repoRoutes() {
	a.mux.HandleFunc("GET /api/v1/repositories", a.authed(a.listRepos))
	a.mux.HandleFunc("POST /api/v1/repositories", a.authed(a.createRepo))
	a.mux.HandleFunc("DELETE /api/v1/repositories/{repo}", a.authed(a.deleteRepo))
	a.mux.HandleFunc("POST /api/v1/repositories/{repo}/validate", a.authed(a.validateRepo))
}

// repository is Argo CD's Repository: its credentials come in a create
// and are never shown.
type repository struct {
	Repo                 string          `json:"repo"`
	Type                 string          `json:"type,omitempty"`
	Name                 string          `json:"name,omitempty"`
	Project              string          `json:"project,omitempty"`
	Username             string          `json:"username,omitempty"`
	Password             string          `json:"password,omitempty"`
	SSHPrivateKey        string          `json:"sshPrivateKey,omitempty"`
	BearerToken          string          `json:"bearerToken,omitempty"`
	Insecure             bool            `json:"insecure,omitempty"`
	EnableOCI            bool            `json:"enableOCI,omitempty"`
	InsecureOCIForceHTTP bool            `json:"insecureOCIForceHttp,omitempty"`
	InheritedCreds       bool            `json:"inheritedCreds,omitempty"`
	ConnectionState      connectionState `json:"connectionState"`
}

// repoSecretKeys are the string fields a repository Secret keeps, by key.
func (r *repository) secretData() map[string][]byte {
	data := map[string][]byte{}
	for k, v := range map[string]string{
		"url": r.Repo, "type": r.Type, "name": r.Name, "project": r.Project, "username": r.Username,
		"password": r.Password, "sshPrivateKey": r.SSHPrivateKey, "bearerToken": r.BearerToken,
	} {
		if v != "" {
			data[k] = []byte(v)
		}
	}
	for k, v := range map[string]bool{"insecure": r.Insecure, "enableOCI": r.EnableOCI, "insecureOCIForceHttp": r.InsecureOCIForceHTTP} {
		if v {
			data[k] = []byte("true")
		}
	}
	return data
}

// repoObject is a repository's RBAC object, as Argo CD names it.
func repoObject(project, repo string) string {
	if project != "" {
		return project + "/" + repo
	}
	return repo
}

// repoSecrets lists the repository Secrets and the repo-creds templates.
func (a *API) repoSecrets(ctx context.Context) ([]corev1.Secret, source.Credentials, error) {
	var secrets corev1.SecretList
	if err := a.opts.Kube.List(ctx, &secrets, client.InNamespace(a.opts.Namespace), client.HasLabels{source.SecretTypeLabel}); err != nil {
		return nil, nil, fmt.Errorf("list repository Secrets: %w", err)
	}
	creds, _ := source.CredentialsFromSecrets(secrets.Items)
	var repos []corev1.Secret
	for _, s := range secrets.Items {
		if s.Labels[source.SecretTypeLabel] == source.SecretTypeRepo {
			repos = append(repos, s)
		}
	}
	return repos, creds, nil
}

// listRepos is GET /api/v1/repositories: the repositories the user may
// get, without credentials, each probed with its credentials.
func (a *API) listRepos(w http.ResponseWriter, r *http.Request, s *session) {
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	secrets, creds, err := a.repoSecrets(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	items := []repository{}
	for i := range secrets {
		d := secrets[i].Data
		repo := repository{Repo: string(d["url"]), Type: string(d["type"]), Name: string(d["name"]), Project: string(d["project"]),
			Username: string(d["username"]), Insecure: string(d["insecure"]) == "true", EnableOCI: string(d["enableOCI"]) == "true"}
		if repo.Repo == "" || !enf.Allowed(s.subject(), rbac.ResourceRepositories, rbac.ActionGet, repoObject(repo.Project, repo.Repo)) {
			continue
		}
		own, _ := source.CredentialFromSecret(&secrets[i])
		repo.InheritedCreds = own.Username == "" && own.Password == "" && own.SSHPrivateKey == "" && own.BearerToken == "" && creds.For(repo.Repo) != nil && creds.For(repo.Repo).Prefix
		items = append(items, repo)
	}
	var wg stdsync.WaitGroup
	for i := range items {
		wg.Go(func() { items[i].ConnectionState = probeRepo(r.Context(), creds, items[i]) })
	}
	wg.Wait()
	writeList(w, nil, items)
}

// repoCredential is the credential of the creds that matches a
// repository, or none.
func repoCredential(creds source.Credentials, repo repository) source.RepoCredential {
	cred := source.RepoCredential{URL: repo.Repo, Type: repo.Type, Insecure: repo.Insecure, EnableOCI: repo.EnableOCI}
	if c := creds.For(repo.Repo); c != nil {
		cred = *c
		cred.URL, cred.Type = repo.Repo, repo.Type
	}
	return cred
}

// probeRepo checks a repository with the credentials that match it.
func probeRepo(ctx context.Context, creds source.Credentials, repo repository) connectionState {
	state := connectionState{Status: "Successful", AttemptedAt: time.Now().UTC().Truncate(time.Second)}
	err := source.Probe(ctx, repoCredential(creds, repo), source.ProbeOptions{Timeout: 10 * time.Second})
	switch {
	case errors.Is(err, source.ErrProbeUnsupported):
		state.Status, state.Message = "Unknown", err.Error()
	case err != nil:
		state.Status, state.Message = "Failed", "Unable to connect to repository: "+err.Error()
	}
	return state
}

// createRepo is POST /api/v1/repositories (?upsert=), the body the
// Repository: it is probed with its credentials (or those of a repo-creds
// template that matches it) and stored as Argo CD stores it, a Secret
// labelled argocd.argoproj.io/secret-type: repository.
func (a *API) createRepo(w http.ResponseWriter, r *http.Request, s *session) {
	var repo repository
	if err := decodeJSON(r, &repo); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	upsert, err := boolParam(r, "upsert", false)
	if err == nil && r.URL.Query().Get("credsOnly") == "true" {
		err = errors.New("credsOnly is not supported: store a repo-creds Secret to share credentials")
	}
	if err == nil && repo.Repo == "" {
		err = errors.New("missing payload in request: repo is empty")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if a.allowedOr403(w, r, s, rbac.ResourceRepositories, rbac.ActionCreate, repoObject(repo.Project, repo.Repo)) == nil {
		return
	}
	if status, err := a.probeNewRepo(r.Context(), repo); err != nil {
		writeError(w, status, err)
		return
	}
	if status, err := a.storeRepo(r.Context(), repo, upsert); err != nil {
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, repository{Repo: repo.Repo, Type: repo.Type, Name: repo.Name})
}

// probeNewRepo probes a repository about to be added with its own
// credentials, or with those of a repo-creds template that matches it;
// the error is the probe's, with the status to answer.
func (a *API) probeNewRepo(ctx context.Context, repo repository) (int, error) {
	_, creds, err := a.repoSecrets(ctx)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	if repo.Username != "" || repo.Password != "" || repo.SSHPrivateKey != "" || repo.BearerToken != "" {
		creds = source.Credentials{{URL: repo.Repo, Type: repo.Type, Username: repo.Username, Password: repo.Password,
			SSHPrivateKey: repo.SSHPrivateKey, BearerToken: repo.BearerToken, Insecure: repo.Insecure, EnableOCI: repo.EnableOCI}}
	}
	err = source.Probe(ctx, repoCredential(creds, repo), source.ProbeOptions{Timeout: 10 * time.Second})
	if err != nil && !errors.Is(err, source.ErrProbeUnsupported) {
		return http.StatusBadRequest, fmt.Errorf("error testing repository connectivity: %w", err)
	}
	return http.StatusOK, nil
}

// validateRepo is POST /api/v1/repositories/{repo}/validate, Argo CD's
// ValidateAccess, which argocd repo add calls before it adds: the
// repository is probed as an add would probe it, with the credentials in
// the query, and nothing is stored.
func (a *API) validateRepo(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	repo := repository{Repo: r.PathValue("repo"), Type: q.Get("type"), Name: q.Get("name"), Project: q.Get("project"),
		Username: q.Get("username"), Password: q.Get("password"), SSHPrivateKey: q.Get("sshPrivateKey"), BearerToken: q.Get("bearerToken"),
		Insecure: q.Get("insecure") == "true", EnableOCI: q.Get("enableOci") == "true"}
	if a.allowedOr403(w, r, s, rbac.ResourceRepositories, rbac.ActionCreate, repoObject(repo.Project, repo.Repo)) == nil {
		return
	}
	if status, err := a.probeNewRepo(r.Context(), repo); err != nil {
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// errRepoDiffers is Argo CD's refusal to create over a different
// repository.
var errRepoDiffers = errors.New("existing repository spec is different; use upsert flag to force update")

// storeRepo writes the repository's Secret: a new one, the same again,
// or, with upsert, a replacement.
func (a *API) storeRepo(ctx context.Context, repo repository, upsert bool) (int, error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(repo.Repo))
	_, _ = h.Write([]byte(repo.Project))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: a.opts.Namespace, Name: "repo-" + strconv.FormatUint(uint64(h.Sum32()), 10),
		Labels:      map[string]string{source.SecretTypeLabel: source.SecretTypeRepo},
		Annotations: map[string]string{"managed-by": "argocd.argoproj.io"},
	}, Data: repo.secretData()}
	err := a.opts.Kube.Create(ctx, sec)
	if !apierrors.IsAlreadyExists(err) {
		return statusOf(err), err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &corev1.Secret{}
		if err := a.opts.Kube.Get(ctx, client.ObjectKeyFromObject(sec), live); err != nil {
			return err
		}
		if maps.EqualFunc(live.Data, sec.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
			return nil
		}
		if !upsert {
			return errRepoDiffers
		}
		live.Data = sec.Data
		return a.opts.Kube.Update(ctx, live)
	})
	return statusOf(err), err
}

// deleteRepo is DELETE /api/v1/repositories/{repo} (?appProject= for a
// project's repository): its Secret goes.
func (a *API) deleteRepo(w http.ResponseWriter, r *http.Request, s *session) {
	url, project := r.PathValue("repo"), r.URL.Query().Get("appProject")
	if a.allowedOr403(w, r, s, rbac.ResourceRepositories, rbac.ActionDelete, repoObject(project, url)) == nil {
		return
	}
	secrets, _, err := a.repoSecrets(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	for i := range secrets {
		if string(secrets[i].Data["url"]) == url && string(secrets[i].Data["project"]) == project {
			if err := a.opts.Kube.Delete(r.Context(), &secrets[i]); err != nil {
				writeError(w, statusOf(err), err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{})
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("repo '%s' not found", url))
}
