package appclient

import (
	"context"
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// maxTreeDepth bounds how deep Get follows child Applications.
const maxTreeDepth = 10

// AppTree is an Application with the child Applications it manages.
type AppTree struct {
	App *v1alpha1.Application
	// Raw is the root app as stored (children have none), for YAML and
	// JSON output that keeps fields these types do not model.
	Raw *unstructured.Unstructured
	// Children are the Applications listed in App's status.resources that
	// exist in the same namespace, by name. A child that is missing (not yet
	// created, or deleted) has no entry.
	Children map[string]*AppTree
}

// Get reads one Application and, recursively, its child Applications.
type Get struct {
	Client *Client
	Name   string
}

// Run reads the app tree.
func (a *Get) Run(ctx context.Context) (*AppTree, error) {
	raw, err := a.Client.GetRaw(ctx, a.Name)
	if err != nil {
		return nil, err
	}
	app, err := decode(raw)
	if err != nil {
		return nil, err
	}
	t, err := a.tree(ctx, app, []string{app.Name})
	if err != nil {
		return nil, err
	}
	t.Raw = raw
	return t, nil
}

func (a *Get) tree(ctx context.Context, app *v1alpha1.Application, path []string) (*AppTree, error) {
	t := &AppTree{App: app, Children: map[string]*AppTree{}}
	if len(path) > maxTreeDepth {
		return t, nil
	}
	for _, name := range a.childNames(app) {
		if slices.Contains(path, name) {
			continue // a cycle: show the row, do not nest again
		}
		child, err := a.Client.Get(ctx, name)
		var nf *application.NotFoundError
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sub, err := a.tree(ctx, child, append(slices.Clone(path), name))
		if err != nil {
			return nil, err
		}
		t.Children[name] = sub
	}
	return t, nil
}

// childNames lists the Applications in app's resources that live in the
// client's namespace.
func (a *Get) childNames(app *v1alpha1.Application) []string {
	var names []string
	for _, r := range app.Status.Resources {
		if application.IsApplication(r.Group, r.Kind) && r.Namespace == a.Client.Namespace && !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}

// ResourceState is one row of an app's resource table.
type ResourceState struct {
	Group, Kind, Namespace, Name  string
	Status, Health, Hook, Message string
}

// ResourceStates lists an app's objects the way `argocd app get` does: first
// the objects of the last sync result in their order (hooks with their
// phase), then the other objects of status.resources sorted by group, kind,
// namespace and name.
func ResourceStates(app *v1alpha1.Application) []ResourceState {
	type key struct{ group, kind, namespace, name string }
	byKey := map[key]v1alpha1.ResourceStatus{}
	for _, r := range app.Status.Resources {
		byKey[key{r.Group, r.Kind, r.Namespace, r.Name}] = r
	}
	var states []ResourceState
	if op := app.Status.OperationState; op != nil && op.SyncResult != nil {
		for _, res := range op.SyncResult.Resources {
			if res == nil {
				continue
			}
			k := key{res.Group, res.Kind, res.Namespace, res.Name}
			s := ResourceState{
				Group: res.Group, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name,
				Status: res.HookPhase, Health: string(res.Status), Hook: res.HookType, Message: res.Message,
			}
			if live, ok := byKey[k]; ok && res.HookType == "" {
				s.Status, s.Health = string(live.Status), healthOf(live)
			}
			states = append(states, s)
			delete(byKey, k)
		}
	}
	rest := make([]key, 0, len(byKey))
	for k := range byKey {
		rest = append(rest, k)
	}
	slices.SortFunc(rest, func(x, y key) int {
		return strings.Compare(x.group+"/"+x.kind+"/"+x.namespace+"/"+x.name, y.group+"/"+y.kind+"/"+y.namespace+"/"+y.name)
	})
	for _, k := range rest {
		r := byKey[k]
		states = append(states, ResourceState{
			Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name,
			Status: string(r.Status), Health: healthOf(r),
		})
	}
	return states
}

func healthOf(r v1alpha1.ResourceStatus) string {
	if r.Health == nil {
		return ""
	}
	return string(r.Health.Status)
}
