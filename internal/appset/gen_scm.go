package appset

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/scm"
)

// DefaultSCMRequeue is how often the SCM provider and pull request
// generators ask again when they set no requeueAfterSeconds, as Argo CD's.
const DefaultSCMRequeue = 30 * time.Minute

// scmTimeout bounds one call to a Git hosting service.
const scmTimeout = 30 * time.Second

// SCMPolicy says which Git hosting services the SCM provider and pull
// request generators may call (Argo CD's --enable-scm-providers and
// --allowed-scm-providers).
type SCMPolicy struct {
	// Disabled turns both generators off.
	Disabled bool
	// Allowed, when set, lists the only `api` URLs a generator may name
	// (compared as written); a generator that names none (github.com) is
	// always allowed.
	Allowed []string
}

// check refuses a generator's api the policy does not allow.
func (p SCMPolicy) check(api string) error {
	if p.Disabled {
		return errors.New("scm providers are disabled")
	}
	if api == "" || len(p.Allowed) == 0 || slices.Contains(p.Allowed, api) {
		return nil
	}
	return fmt.Errorf("scm provider not allowed: scm provider %q not allowed, must use one of the following: %s", api, strings.Join(p.Allowed, ", "))
}

// scmService is a Git hosting service as the SCM provider generator
// reads it.
type scmService interface {
	Repositories(ctx context.Context, owner string, o scm.RepositoryOptions) ([]scm.Repository, error)
	pathChecker
}

// scmProvider yields one parameter set per repository (per branch with
// allBranches) of a GitHub or Gitea organization that passes the filters.
func (g *generation) scmProvider(sg *v1alpha1.SCMProviderGenerator, parent params) ([]params, error) {
	g.noteRequeue(requeueOr(sg.RequeueAfterSeconds, DefaultSCMRequeue))
	client, owner, opts, err := g.scmService(sg)
	if err != nil {
		return nil, err
	}
	repos, err := client.Repositories(g.ctx, owner, opts)
	if err != nil {
		return nil, err
	}
	kept, err := filterRepos(g.ctx, client, repos, sg.Filters)
	if err != nil {
		return nil, err
	}
	out := make([]params, 0, len(kept))
	for _, r := range kept {
		p := params{
			"organization": r.Organization, "repository": r.Name, "repository_id": r.ID, "url": r.URL,
			"branch": r.Branch, "branchNormalized": normalize(r.Branch), "sha": r.SHA,
			"short_sha": prefix(r.SHA, 8), "short_sha_7": prefix(r.SHA, 7), "labels": strings.Join(r.Labels, ","),
		}
		if err := appendValues(p, sg.Values, parent, g.r); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// scmService is the service sg names, the owner whose repositories it
// lists, and how.
func (g *generation) scmService(sg *v1alpha1.SCMProviderGenerator) (scmService, string, scm.RepositoryOptions, error) {
	opts := scm.RepositoryOptions{CloneProtocol: sg.CloneProtocol}
	var client scmService
	var owner string
	var err error
	switch {
	case sg.Github != nil:
		gh := sg.Github
		owner, opts.AllBranches, opts.ExcludeArchived = gh.Organization, gh.AllBranches, gh.ExcludeArchivedRepos
		if err = g.in.SCM.check(gh.API); err == nil {
			client, err = g.github(gh.API, gh.TokenRef, gh.AppSecretName)
		}
	case sg.Gitea != nil:
		gt := sg.Gitea
		owner, opts.AllBranches, opts.ExcludeArchived = gt.Owner, gt.AllBranches, gt.ExcludeArchivedRepos
		if err = g.in.SCM.check(gt.API); err == nil {
			client, err = g.gitea(gt.API, gt.TokenRef, gt.Insecure)
		}
	default:
		return nil, "", opts, unsupportedProvider("scmProvider", scmProviderNames(sg))
	}
	if err != nil {
		return nil, "", opts, fmt.Errorf("scm provider: %w", err)
	}
	return client, owner, opts, nil
}

// requeueOr is a generator's requeueAfterSeconds, or def when it sets
// none.
func requeueOr(seconds *int64, def time.Duration) time.Duration {
	if seconds != nil {
		return time.Duration(*seconds) * time.Second
	}
	return def
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// github is a GitHub client for api with the token tokenRef names (else
// $GITHUB_TOKEN, else none), as Argo CD's.
func (g *generation) github(api string, tokenRef *v1alpha1.SecretRef, appSecret string) (*scm.GitHub, error) {
	if appSecret != "" {
		return nil, fmt.Errorf("appSecretName %q: GitHub App credentials are not supported by wavecd; use tokenRef", appSecret)
	}
	token, err := g.scmToken(tokenRef, "GITHUB_TOKEN", "Github")
	if err != nil {
		return nil, err
	}
	return scm.NewGitHub(scm.GitHubOptions{API: api, Token: token, HTTPClient: &http.Client{Timeout: scmTimeout}})
}

// gitea is a client of the Gitea server at api with the token tokenRef
// names (else $GITEA_TOKEN, else none), as Argo CD's.
func (g *generation) gitea(api string, tokenRef *v1alpha1.SecretRef, insecure bool) (*scm.Gitea, error) {
	token, err := g.scmToken(tokenRef, "GITEA_TOKEN", "Gitea")
	if err != nil {
		return nil, err
	}
	return scm.NewGitea(g.ctx, scm.GiteaOptions{API: api, Token: token, Insecure: insecure, HTTPClient: &http.Client{Timeout: scmTimeout}})
}

// scmToken is the token ref names, else the environment variable env
// holds, else none; service names the service in an error, as Argo CD's.
func (g *generation) scmToken(ref *v1alpha1.SecretRef, env, service string) (string, error) {
	if ref == nil {
		return os.Getenv(env), nil
	}
	t, err := g.secretKey(ref)
	if err != nil {
		return "", fmt.Errorf("error fetching %s token: %w", service, err)
	}
	return t, nil
}

// secretKey reads a key of a Secret in the set's namespace.
func (g *generation) secretKey(ref *v1alpha1.SecretRef) (string, error) {
	if g.in.Objects == nil {
		return "", errors.New("tokenRef needs the namespace's Secrets, which are not available here")
	}
	ns := g.set.Namespace
	sec, err := g.in.Objects.Secret(g.ctx, ns, ref.SecretName)
	if err != nil {
		return "", fmt.Errorf("error fetching secret %s/%s: %w", ns, ref.SecretName, err)
	}
	b, ok := sec.Data[ref.Key]
	if !ok {
		return "", fmt.Errorf("key %q in secret %s/%s not found", ref.Key, ns, ref.SecretName)
	}
	return string(b), nil
}

// unsupportedProvider names the providers set that wavecd does not speak.
func unsupportedProvider(generator string, set []string) error {
	if len(set) == 0 {
		return fmt.Errorf("no %s provider set (supported by wavecd: gitea, github)", generator)
	}
	return fmt.Errorf("the %s generator's %s provider is not supported by wavecd (supported: gitea, github)", generator, strings.Join(set, ", "))
}

func scmProviderNames(sg *v1alpha1.SCMProviderGenerator) []string {
	return present(map[string]bool{"gitlab": sg.Gitlab != nil, "bitbucket": sg.Bitbucket != nil,
		"bitbucketServer": sg.BitbucketServer != nil, "azureDevOps": sg.AzureDevOps != nil, "awsCodeCommit": sg.AWSCodeCommit != nil})
}

func present(set map[string]bool) []string {
	var out []string
	for name, ok := range set {
		if ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// compileMatch compiles one filter's pattern, nil when it is not set.
func compileMatch(field string, pattern *string) (*regexp.Regexp, error) {
	if pattern == nil {
		return nil, nil
	}
	re, err := regexp.Compile(*pattern)
	if err != nil {
		return nil, fmt.Errorf("error compiling %s regexp %q: %w", field, *pattern, err)
	}
	return re, nil
}
