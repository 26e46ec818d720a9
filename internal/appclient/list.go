package appclient

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// HealthStatuses are the app health values a filter accepts.
var HealthStatuses = []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}

// SyncStatuses are the app sync values a filter accepts.
var SyncStatuses = []string{
	string(v1alpha1.SyncStatusCodeSynced), string(v1alpha1.SyncStatusCodeOutOfSync), string(v1alpha1.SyncStatusCodeUnknown),
}

// List lists the namespace's Applications, sorted by name.
type List struct {
	Client *Client
	// Projects keeps apps of these projects; empty keeps all.
	Projects []string
	// Selector is a label selector, as in kubectl.
	Selector string
	// Health keeps apps with this health status (case-insensitive).
	Health string
	// Sync keeps apps with this sync status (case-insensitive).
	Sync string
	// Repo keeps apps with a source from this repository URL.
	Repo string
	// Cluster keeps apps whose destination server or name is this.
	Cluster string
}

// ListResult holds the listed apps, typed and as stored (same order).
type ListResult struct {
	Apps []v1alpha1.Application
	Raw  []*unstructured.Unstructured
}

// Run lists the apps.
func (a *List) Run(ctx context.Context) (*ListResult, error) {
	health, err := oneOf("--health", a.Health, HealthStatuses)
	if err != nil {
		return nil, err
	}
	sync, err := oneOf("--sync", a.Sync, SyncStatuses)
	if err != nil {
		return nil, err
	}
	var opts []client.ListOption
	if a.Selector != "" {
		sel, err := labels.Parse(a.Selector)
		if err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", a.Selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	apps, raw, err := a.Client.list(ctx, opts...)
	if err != nil {
		return nil, err
	}
	res := &ListResult{}
	for i := range apps {
		if a.keep(&apps[i], health, sync) {
			res.Apps = append(res.Apps, apps[i])
			res.Raw = append(res.Raw, raw[i])
		}
	}
	sort.Sort(byName(*res))
	return res, nil
}

// byName sorts a ListResult by app name, keeping Apps and Raw aligned.
type byName ListResult

func (b byName) Len() int           { return len(b.Apps) }
func (b byName) Less(i, j int) bool { return b.Apps[i].Name < b.Apps[j].Name }
func (b byName) Swap(i, j int) {
	b.Apps[i], b.Apps[j] = b.Apps[j], b.Apps[i]
	b.Raw[i], b.Raw[j] = b.Raw[j], b.Raw[i]
}

func (a *List) keep(app *v1alpha1.Application, health, sync string) bool {
	if len(a.Projects) > 0 && !slices.Contains(a.Projects, app.Spec.Project) {
		return false
	}
	if health != "" && string(app.Status.Health.Status) != health {
		return false
	}
	if sync != "" && string(app.Status.Sync.Status) != sync {
		return false
	}
	if a.Cluster != "" && app.Spec.Destination.Server != a.Cluster && app.Spec.Destination.Name != a.Cluster {
		return false
	}
	if a.Repo != "" && !slices.ContainsFunc(app.Spec.GetSources(), func(s v1alpha1.ApplicationSource) bool {
		return s.RepoURL == a.Repo
	}) {
		return false
	}
	return true
}

// oneOf returns the canonical spelling of value among allowed, matched
// without regard to case; empty stays empty.
func oneOf(flag, value string, allowed []string) (string, error) {
	if value == "" {
		return "", nil
	}
	for _, v := range allowed {
		if strings.EqualFold(v, value) {
			return v, nil
		}
	}
	return "", fmt.Errorf("invalid %s %q: use one of %s", flag, value, strings.Join(allowed, ", "))
}
