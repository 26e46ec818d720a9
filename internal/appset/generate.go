package appset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/source"
)

// Repos reads repository trees; *source.Repos is one.
type Repos interface {
	// Checkout resolves revision in the repository and returns its tree.
	Checkout(ctx context.Context, repoURL, revision string) (*source.Tree, error)
}

// Clusters lists the registered clusters; cluster.Registry is one.
type Clusters interface {
	List(ctx context.Context) ([]cluster.Cluster, error)
}

// Inputs are what generators read besides the ApplicationSet.
type Inputs struct {
	Repos    Repos
	Clusters Clusters
	// NewGitFileGlobbing matches git files generator paths the way Argo
	// CD's --enable-new-git-file-globbing does: `*` stays within one path
	// segment and `**` crosses segments. By default `*` matches across
	// segments, as `git ls-files` does.
	NewGitFileGlobbing bool
	// GitRequeue is how often a git generator is read again when it sets
	// no requeueAfterSeconds (default 3 minutes, as Argo CD).
	GitRequeue time.Duration
	// Objects reads the ConfigMaps and Secrets the plugin and
	// cluster-decision-resource generators name; without it they are an
	// error.
	Objects Objects
	// Resources lists the cluster-decision-resource generator's
	// resources; without it that generator is an error.
	Resources Resources
	// SCM says which Git hosting services the SCM provider and pull
	// request generators may call.
	SCM SCMPolicy
}

// DefaultGitRequeue is Argo CD's polling period for git generators.
const DefaultGitRequeue = 3 * time.Minute

// Generated is what an ApplicationSet generates.
type Generated struct {
	// Apps are the rendered Applications, in generator order.
	Apps []v1alpha1.Application
	// RequeueAfter is when the generators should run again to notice
	// changes no event reports (Git); 0 means never.
	RequeueAfter time.Duration
}

// GenerateError is a generator or template error; Reason is the
// condition reason Argo CD gives it.
type GenerateError struct {
	Reason string
	Err    error
}

func (e *GenerateError) Error() string { return e.Err.Error() }
func (e *GenerateError) Unwrap() error { return e.Err }

// Generate runs the set's generators and renders its template once per
// parameter set. Any error stops it: a partial result could make the
// caller delete apps whose parameters were not generated. Errors are
// *GenerateError and name the generator (e.g. `generators[1].matrix`) and,
// for templates, the field.
func Generate(ctx context.Context, set *v1alpha1.ApplicationSet, in Inputs) (*Generated, error) {
	if in.GitRequeue == 0 {
		in.GitRequeue = DefaultGitRequeue
	}
	r, err := newRenderer(set.Spec.GoTemplate, set.Spec.GoTemplateOptions)
	if err != nil {
		return nil, &GenerateError{Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError, Err: err}
	}
	g := &generation{ctx: ctx, set: set, in: in, r: r, trees: map[string]*source.Tree{}}
	out := &Generated{}
	for i := range set.Spec.Generators {
		entry := &set.Spec.Generators[i]
		at := fmt.Sprintf("generators[%d]", i)
		kinds := kindsOf(entry)
		if len(kinds) == 0 {
			return nil, paramsError(fmt.Errorf("%s: %w", at, errNoGenerator(entry)))
		}
		for _, k := range kinds {
			apps, err := g.appsOf(entry, k, at+"."+k)
			if err != nil {
				return nil, err
			}
			out.Apps = append(out.Apps, apps...)
		}
	}
	out.RequeueAfter = g.requeue
	return out, nil
}

func paramsError(err error) error {
	return &GenerateError{Reason: v1alpha1.ApplicationSetReasonApplicationParamsGenerationError, Err: err}
}

// generation is one run of Generate.
type generation struct {
	ctx     context.Context //nolint:containedctx // one run's context
	set     *v1alpha1.ApplicationSet
	in      Inputs
	r       *renderer
	requeue time.Duration
	// trees caches checkouts by URL and revision within the run: a matrix
	// may read one repository once per parameter set.
	trees map[string]*source.Tree
}

// appsOf generates the parameter sets of one generator of an entry and
// renders the template (the generator's `template` over the set's) with
// each.
func (g *generation) appsOf(entry *v1alpha1.ApplicationSetGenerator, kind, at string) ([]v1alpha1.Application, error) {
	tmpl, err := mergeTemplates(templateOf(entry, kind), g.set.Spec.Template)
	if err != nil {
		return nil, &GenerateError{Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError, Err: fmt.Errorf("%s: %w", at, err)}
	}
	sets, err := g.paramsOf(entry, kind, at, nil)
	if err != nil {
		return nil, paramsError(err)
	}
	var apps []v1alpha1.Application
	for i, p := range sets {
		app, err := g.renderOne(tmpl, p)
		if err != nil {
			return nil, &GenerateError{
				Reason: v1alpha1.ApplicationSetReasonRenderTemplateParamsError,
				Err:    fmt.Errorf("%s: parameter set %d: %w", at, i, err),
			}
		}
		apps = append(apps, *app)
	}
	return apps, nil
}

// renderOne renders the template and the templatePatch with one
// parameter set, and adds the resources finalizer Argo CD adds.
func (g *generation) renderOne(tmpl v1alpha1.ApplicationSetTemplate, p params) (*v1alpha1.Application, error) {
	app, err := g.r.renderApp(tmpl, p, g.set.Namespace)
	if err != nil {
		return nil, err
	}
	if patch := g.set.Spec.TemplatePatch; patch != nil && *patch != "" {
		if app, err = g.r.applyTemplatePatch(app, *patch, p); err != nil {
			return nil, err
		}
	}
	// Whatever the template says, an app lives in its set's namespace.
	app.Namespace = g.set.Namespace
	if len(app.Finalizers) == 0 && !preserveResources(g.set) {
		app.Finalizers = []string{v1alpha1.FinalizerResources}
	}
	return app, nil
}

func preserveResources(set *v1alpha1.ApplicationSet) bool {
	return set.Spec.SyncPolicy != nil && set.Spec.SyncPolicy.PreserveResourcesOnDeletion
}

// The generator kinds, in the order an entry with several is read.
const (
	kindList     = "list"
	kindClusters = "clusters"
	kindGit      = "git"
	kindMatrix   = "matrix"
	kindMerge    = "merge"
	kindPlugin   = "plugin"
	kindDecision = "clusterDecisionResource"
	kindSCM      = "scmProvider"
	kindPR       = "pullRequest"
)

func kindsOf(e *v1alpha1.ApplicationSetGenerator) []string {
	var out []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{kindList, e.List != nil}, {kindClusters, e.Clusters != nil}, {kindGit, e.Git != nil},
		{kindMatrix, e.Matrix != nil}, {kindMerge, e.Merge != nil}, {kindPlugin, e.Plugin != nil},
		{kindDecision, e.ClusterDecisionResource != nil}, {kindSCM, e.SCMProvider != nil}, {kindPR, e.PullRequest != nil},
	} {
		if k.set {
			out = append(out, k.name)
		}
	}
	return out
}

// errNoGenerator explains an entry with no generator.
func errNoGenerator(*v1alpha1.ApplicationSetGenerator) error {
	return errors.New("no generator set (supported: list, clusters, git, matrix, merge, plugin, clusterDecisionResource, scmProvider, pullRequest)")
}

func templateOf(e *v1alpha1.ApplicationSetGenerator, kind string) *v1alpha1.ApplicationSetTemplate {
	switch kind {
	case kindList:
		return e.List.Template
	case kindClusters:
		return e.Clusters.Template
	case kindGit:
		return e.Git.Template
	case kindMatrix:
		return e.Matrix.Template
	case kindMerge:
		return e.Merge.Template
	case kindPlugin:
		return e.Plugin.Template
	case kindDecision:
		return e.ClusterDecisionResource.Template
	case kindSCM:
		return e.SCMProvider.Template
	case kindPR:
		return e.PullRequest.Template
	}
	return nil
}

// paramsOf returns the parameter sets one generator of an entry yields,
// filtered by the entry's selector. parent is the parameter set of a
// matrix's first child when this is its second: the generator is rendered
// with it first.
func (g *generation) paramsOf(entry *v1alpha1.ApplicationSetGenerator, kind, at string, parent params) ([]params, error) {
	if parent != nil {
		var err error
		if entry, err = g.interpolate(entry, kind, parent); err != nil {
			return nil, fmt.Errorf("%s: render with the parameters of the first generator: %w", at, err)
		}
	}
	var sets []params
	var err error
	switch kind {
	case kindList:
		sets, err = g.list(entry.List, parent)
	case kindClusters:
		sets, err = g.clusters(entry.Clusters, parent)
	case kindGit:
		sets, err = g.git(entry.Git, parent)
	case kindMatrix:
		sets, err = g.matrix(entry.Matrix, at)
	case kindMerge:
		sets, err = g.merge(entry.Merge, at)
	case kindPlugin:
		sets, err = g.plugin(entry.Plugin, parent)
	case kindDecision:
		sets, err = g.clusterDecisions(entry.ClusterDecisionResource)
	case kindSCM:
		sets, err = g.scmProvider(entry.SCMProvider, parent)
	case kindPR:
		sets, err = g.pullRequest(entry.PullRequest, parent)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return g.selectSets(sets, entry, at)
}

// selectSets keeps the sets the entry's selector matches.
func (g *generation) selectSets(sets []params, entry *v1alpha1.ApplicationSetGenerator, at string) ([]params, error) {
	if entry.Selector == nil {
		return sets, nil
	}
	var out []params
	for _, p := range sets {
		ok, err := selectorMatches(entry.Selector, flatten(p))
		if err != nil {
			return nil, fmt.Errorf("%s.%w", at, err)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// interpolate renders a generator (all but its `template` and `values`,
// which are rendered later with its own parameters) with parent.
func (g *generation) interpolate(entry *v1alpha1.ApplicationSetGenerator, kind string, parent params) (*v1alpha1.ApplicationSetGenerator, error) {
	tree, err := toTree(entry)
	if err != nil {
		return nil, err
	}
	m := tree.(map[string]any)
	out := map[string]any{}
	for k, v := range m {
		if k == kind {
			if v, err = g.r.renderTree(v, parent, k, "template", "values"); err != nil {
				return nil, err
			}
		} else if v, err = g.r.renderTree(v, parent, k); err != nil {
			return nil, err
		}
		out[k] = v
	}
	rendered := &v1alpha1.ApplicationSetGenerator{}
	if err := fromTree(out, rendered); err != nil {
		return nil, err
	}
	return rendered, nil
}

// noteRequeue records that the generators must run again after d.
func (g *generation) noteRequeue(d time.Duration) {
	if d > 0 && (g.requeue == 0 || d < g.requeue) {
		g.requeue = d
	}
}
