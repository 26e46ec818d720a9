package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// GitHubNotification is a template's github: fields. The repository and
// the commit come from repoURLPath and revisionPath, templates that
// default to the app's repoURL and synced revision.
type GitHubNotification struct {
	RepoURLPath        string                    `json:"repoURLPath,omitempty"`
	RevisionPath       string                    `json:"revisionPath,omitempty"`
	Status             *GitHubStatus             `json:"status,omitempty"`
	Deployment         *GitHubDeployment         `json:"deployment,omitempty"`
	CheckRun           *GitHubCheckRun           `json:"checkRun,omitempty"`
	RepositoryDispatch *GitHubRepositoryDispatch `json:"repositoryDispatch,omitempty"`
}

// GitHubStatus is a commit status.
type GitHubStatus struct {
	State     string `json:"state,omitempty"`
	Label     string `json:"label,omitempty"`
	TargetURL string `json:"targetURL,omitempty"`
}

// GitHubDeployment is a deployment of the commit and its new status.
type GitHubDeployment struct {
	State                string   `json:"state,omitempty"`
	Environment          string   `json:"environment,omitempty"`
	EnvironmentURL       string   `json:"environmentURL,omitempty"`
	LogURL               string   `json:"logURL,omitempty"`
	Reference            string   `json:"reference,omitempty"`
	RequiredContexts     []string `json:"requiredContexts" notify:"literal"`
	AutoMerge            *bool    `json:"autoMerge,omitempty"`
	TransientEnvironment *bool    `json:"transientEnvironment,omitempty"`
}

// GitHubCheckRun is a check run on the commit.
type GitHubCheckRun struct {
	Name        string `json:"name,omitempty"`
	DetailsURL  string `json:"details_url,omitempty"`
	Status      string `json:"status,omitempty"`
	Conclusion  string `json:"conclusion,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
	CompletedAt string `json:"completed_at,omitempty"`
	Output      *struct {
		Title   string `json:"title,omitempty"`
		Summary string `json:"summary,omitempty"`
		Text    string `json:"text,omitempty"`
	} `json:"output,omitempty"`
}

// GitHubRepositoryDispatch is a repository_dispatch event.
type GitHubRepositoryDispatch struct {
	EventType     string `json:"event_type,omitempty"`
	ClientPayload string `json:"client_payload,omitempty"`
}

// githubOptions are service.github's options: a GitHub App installation.
type githubOptions struct {
	AppID             any    `json:"appID"`
	InstallationID    any    `json:"installationID"`
	PrivateKey        string `json:"privateKey"`
	EnterpriseBaseURL string `json:"enterpriseBaseURL"`
	transportOptions
}

type githubService struct {
	api    string // the REST API's base, ending in /
	client *http.Client
	app    *githubApp
}

func newGitHubService(raw []byte, env serviceEnv) (Service, error) {
	var o githubOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	base, tokenBase := "https://api.github.com/", "https://api.github.com"
	if o.EnterpriseBaseURL != "" {
		tokenBase = strings.TrimRight(o.EnterpriseBaseURL, "/")
		base = tokenBase + "/"
		if !strings.HasSuffix(base, "/api/v3/") {
			base += "api/v3/"
		}
	}
	client, err := o.httpClient(base, env)
	if err != nil {
		return nil, err
	}
	app, err := newGitHubApp(o, tokenBase, client)
	if err != nil {
		return nil, err
	}
	return &githubService{api: base, client: client, app: app}, nil
}

// Send writes what the template asks for on the commit: a status, a
// deployment status, a check run, a repository dispatch.
func (s *githubService) Send(ctx context.Context, n *Notification, _ Destination) error {
	g := n.GitHub
	if g == nil {
		return errors.New("the template has no github: fields")
	}
	repo, err := fullNameByRepoURL(g.RepoURLPath)
	if err != nil {
		return err
	}
	rev := g.RevisionPath
	desc := clip(n.Message, 140)
	if g.Status != nil {
		if err := s.call(ctx, http.MethodPost, "repos/"+repo+"/statuses/"+rev, map[string]any{
			"state": g.Status.State, "description": desc, "context": g.Status.Label, "target_url": g.Status.TargetURL,
		}, nil); err != nil {
			return fmt.Errorf("commit status: %w", err)
		}
	}
	if g.Deployment != nil {
		if err := s.deploymentStatus(ctx, repo, rev, desc, g.Deployment); err != nil {
			return fmt.Errorf("deployment status: %w", err)
		}
	}
	if c := g.CheckRun; c != nil {
		body := map[string]any{"head_sha": rev, "external_id": "argocd-notifications", "name": c.Name, "details_url": c.DetailsURL}
		status := c.Status
		if c.Conclusion != "" && status == "" {
			status = "completed"
		}
		for k, v := range map[string]string{"status": status, "conclusion": c.Conclusion, "started_at": c.StartedAt, "completed_at": c.CompletedAt} {
			if v != "" {
				body[k] = v
			}
		}
		if c.Output != nil {
			body["output"] = c.Output
		}
		if err := s.call(ctx, http.MethodPost, "repos/"+repo+"/check-runs", body, nil); err != nil {
			return fmt.Errorf("check run: %w", err)
		}
	}
	if d := g.RepositoryDispatch; d != nil {
		payload := json.RawMessage(cmp.Or(d.ClientPayload, "{}"))
		if !json.Valid(payload) {
			return errors.New("repositoryDispatch.client_payload is not JSON")
		}
		if err := s.call(ctx, http.MethodPost, "repos/"+repo+"/dispatches", map[string]any{"event_type": d.EventType, "client_payload": payload}, nil); err != nil {
			return fmt.Errorf("repository dispatch: %w", err)
		}
	}
	return nil
}

// deploymentStatus adds a status to the commit's deployment to the
// environment, creating the deployment when there is none.
func (s *githubService) deploymentStatus(ctx context.Context, repo, rev, desc string, d *GitHubDeployment) error {
	var list []struct {
		ID int64 `json:"id"`
	}
	q := url.Values{"ref": {rev}, "environment": {d.Environment}}
	if err := s.call(ctx, http.MethodGet, "repos/"+repo+"/deployments?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	if len(list) == 0 {
		autoMerge, transient := true, false
		if d.AutoMerge != nil {
			autoMerge = *d.AutoMerge
		}
		if d.TransientEnvironment != nil {
			transient = *d.TransientEnvironment
		}
		contexts := d.RequiredContexts
		if contexts == nil {
			contexts = []string{}
		}
		var created struct {
			ID int64 `json:"id"`
		}
		if err := s.call(ctx, http.MethodPost, "repos/"+repo+"/deployments", map[string]any{
			"ref": cmp.Or(d.Reference, rev), "environment": d.Environment, "required_contexts": contexts,
			"auto_merge": autoMerge, "transient_environment": transient,
		}, &created); err != nil {
			return err
		}
		list = append(list, created)
	}
	return s.call(ctx, http.MethodPost, fmt.Sprintf("repos/%s/deployments/%d/statuses", repo, list[0].ID), map[string]any{
		"state": d.State, "log_url": d.LogURL, "description": desc, "environment": d.Environment, "environment_url": d.EnvironmentURL,
	}, nil)
}

// call sends one REST call with the installation's token and decodes the
// answer into out.
func (s *githubService) call(ctx context.Context, method, path string, body, out any) error {
	token, err := s.app.token(ctx)
	if err != nil {
		return err
	}
	var payload []byte
	if body != nil {
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, s.api+path, strings.NewReader(string(payload)))
	if err != nil {
		return fmt.Errorf("build request: %w", redactURLError(err))
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Authorization", "token "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := do(s.client, req)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			return fmt.Errorf("read response: %w", err)
		}
	}
	return nil
}

// fullNameByRepoURL returns "owner/repo" of a Git URL (https, ssh or
// scp-like), as Argo CD's repo.FullNameByRepoURL does.
func fullNameByRepoURL(raw string) (string, error) {
	p := raw
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("repository URL %q: %w", raw, err)
		}
		p = u.Path
	case strings.Contains(raw, ":"):
		_, p, _ = strings.Cut(raw, ":")
	}
	var parts []string
	for _, s := range strings.Split(strings.TrimSuffix(p, ".git"), "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) < 2 {
		return "", fmt.Errorf("repository URL %q does not name an owner and a repository", raw)
	}
	return parts[0] + "/" + parts[1], nil
}

// clip cuts s to n runes, ending in "..." when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}
