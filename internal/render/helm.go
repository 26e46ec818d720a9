package render

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// defaultNamespace is what `helm template` uses without --namespace.
const defaultNamespace = "default"

// maxChartDepth bounds symlinked folders and nested dependencies.
const maxChartDepth = 16

// Helm renders Helm charts with `helm template` semantics through the Helm
// SDK: CRDs included unless skipCrds, release name defaulting to the app
// name, namespace defaulting to the destination namespace, hooks included
// (test hooks too, unless skipTests).
type Helm struct {
	// Charts fetches charts and dependencies from Helm repositories; nil
	// allows only charts in Git with vendored or file:// dependencies.
	Charts *source.Charts
}

// Render implements Renderer.
func (h *Helm) Render(ctx context.Context, req *Request) (*Result, error) {
	opts := req.Source.Helm
	if opts == nil {
		opts = &v1alpha1.ApplicationSourceHelm{}
	}
	loaded, err := h.loadChart(ctx, req)
	if err != nil {
		return nil, err
	}
	vals, err := helmValues(req, opts, loaded)
	if err != nil {
		return nil, err
	}
	text, err := h.template(ctx, req, opts, loaded.chart, vals)
	if err != nil {
		return nil, err
	}
	lim := req.limits()
	if err := req.budget().Take("helm template of "+chartLabel(req, loaded.chart), int64(len(text))); err != nil {
		return nil, err
	}
	objs, err := parseHelmOutput(text, lim.MaxManifestSize)
	if err != nil {
		return nil, err
	}
	return &Result{Objects: objs, Revisions: []string{loaded.revision}, Size: int64(len(text))}, nil
}

// loadedChart is a chart and where its files came from.
type loadedChart struct {
	chart *chart.Chart
	// tree and dir locate the chart in Git; tree is nil for a chart from a
	// Helm repository.
	tree     *source.Tree
	dir      string
	revision string
}

func (h *Helm) loadChart(ctx context.Context, req *Request) (*loadedChart, error) {
	if source.KindOf(&req.Source).Packaged() {
		return h.loadRepoChart(ctx, req.Source.RepoURL, req.Source.Chart, req.Source.TargetRevision)
	}
	dir, err := appPath(req.Tree, req.Source.Path)
	if err != nil {
		return nil, err
	}
	c, err := loadTreeChart(req.Tree, dir)
	if err != nil {
		return nil, err
	}
	if err := h.addDependencies(ctx, c, req.Tree, dir, 0); err != nil {
		return nil, err
	}
	return &loadedChart{chart: c, tree: req.Tree, dir: dir, revision: req.Tree.Revision()}, nil
}

func (h *Helm) loadRepoChart(ctx context.Context, repoURL, name, version string) (*loadedChart, error) {
	if h.Charts == nil {
		return nil, fmt.Errorf("chart %s from %s: no Helm repository access configured", name, source.RedactURL(repoURL))
	}
	fetched, err := h.Charts.Fetch(ctx, repoURL, name, version)
	if err != nil {
		return nil, err
	}
	c, err := h.loadFetched(ctx, fetched, 0)
	if err != nil {
		return nil, fmt.Errorf("chart %s %s from %s: %w", name, fetched.Version, source.RedactURL(repoURL), err)
	}
	return &loadedChart{chart: c, revision: fetched.Version}, nil
}

// loadFetched loads a chart from a Helm repository (an archive or a mirror
// folder) with its dependencies.
func (h *Helm) loadFetched(ctx context.Context, fetched *source.FetchedChart, depth int) (*chart.Chart, error) {
	if fetched.Tree != nil {
		c, err := loadTreeChart(fetched.Tree, fetched.Dir)
		if err != nil {
			return nil, err
		}
		return c, h.addDependencies(ctx, c, fetched.Tree, fetched.Dir, depth)
	}
	c, err := loader.LoadArchive(bytes.NewReader(fetched.Archive))
	if err != nil {
		return nil, err
	}
	return c, h.addDependencies(ctx, c, nil, "", depth)
}

// loadTreeChart loads the chart in folder dir of tree, honouring
// .helmignore like `helm template` does for a chart folder.
func loadTreeChart(tree *source.Tree, dir string) (*chart.Chart, error) {
	rules := ignore.Empty()
	if data, err := tree.ReadFile(joinSlash(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", dir, ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	var files []*archive.BufferedFile
	if err := collectChartFiles(tree, dir, "", rules, &files, 0); err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return c, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// collectChartFiles reads the files under dir/rel, following symlinks that
// stay in the repository (Helm follows symlinks in chart folders too).
func collectChartFiles(tree *source.Tree, dir, rel string, rules *ignore.Rules, out *[]*archive.BufferedFile, depth int) error {
	if depth > maxChartDepth {
		return fmt.Errorf("%s: folders nested too deep (symlink loop?)", rel)
	}
	entries, err := tree.ReadDir(joinSlash(dir, rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := joinSlash(rel, e.Name())
		info, err := tree.Stat(joinSlash(dir, name))
		if err != nil {
			return err
		}
		if rules.Ignore(name, info) {
			continue
		}
		if info.IsDir() {
			if err := collectChartFiles(tree, dir, name, rules, out, depth+1); err != nil {
				return err
			}
			continue
		}
		data, err := tree.ReadFile(joinSlash(dir, name))
		if err != nil {
			return err
		}
		if int64(len(data)) > archive.MaxDecompressedFileSize {
			return fmt.Errorf("chart file %q is larger than the maximum file size %d", name, archive.MaxDecompressedFileSize)
		}
		*out = append(*out, &archive.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, utf8BOM)})
	}
	return nil
}

// template runs Helm's install action in client-only dry-run mode, as
// `helm template` does, and returns the same text `helm template` prints.
func (h *Helm) template(ctx context.Context, req *Request, opts *v1alpha1.ApplicationSourceHelm, c *chart.Chart, vals map[string]any) (string, error) {
	inst := action.NewInstall(action.NewConfiguration())
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true
	inst.ReleaseName = firstNonEmpty(opts.ReleaseName, appNameOf(req.AppName))
	inst.Namespace = firstNonEmpty(opts.Namespace, req.Namespace, defaultNamespace)
	inst.IncludeCRDs = !opts.SkipCrds
	inst.SkipSchemaValidation = opts.SkipSchemaValidation
	caps := helmCapabilities(req.Capabilities, opts)
	if caps.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(caps.KubeVersion)
		if err != nil {
			return "", fmt.Errorf("field helm.kubeVersion: invalid kube version %q: %w", caps.KubeVersion, err)
		}
		inst.KubeVersion = kv
	}
	inst.APIVersions = common.VersionSet(caps.APIVersions)
	rel, err := inst.RunWithContext(ctx, c, vals)
	if err != nil {
		return "", fmt.Errorf("helm template %s: %w", chartLabel(req, c), err)
	}
	r, ok := rel.(*release.Release)
	if !ok {
		return "", fmt.Errorf("helm template %s: unexpected release type %T", chartLabel(req, c), rel)
	}
	return templateText(r, opts.SkipTests), nil
}

// helmCapabilities picks the source's kubeVersion and apiVersions over the
// destination's, as Argo CD does.
func helmCapabilities(dest Capabilities, opts *v1alpha1.ApplicationSourceHelm) Capabilities {
	caps := dest
	if opts.KubeVersion != "" {
		caps.KubeVersion = opts.KubeVersion
	}
	if len(opts.APIVersions) > 0 {
		caps.APIVersions = opts.APIVersions
	}
	return caps
}

func chartLabel(req *Request, c *chart.Chart) string {
	if source.KindOf(&req.Source).Packaged() {
		return fmt.Sprintf("chart %s from %s", c.Name(), source.RedactURL(req.Source.RepoURL))
	}
	return fmt.Sprintf("chart %s at %s", c.Name(), req.Source.Path)
}

// templateText is what `helm template` prints for a release.
func templateText(r *release.Release, skipTests bool) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(r.Manifest))
	b.WriteString("\n")
	for _, hk := range r.Hooks {
		if skipTests && slices.Contains(hk.Events, release.HookTest) {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", hk.Path, hk.Manifest)
	}
	return b.String()
}

var sourceComment = regexp.MustCompile(`(?m)^# Source: (.+)$`)

// parseHelmOutput parses `helm template` text; errors name the template.
// A document over maxDoc bytes (0: no limit) is an error.
func parseHelmOutput(text string, maxDoc int64) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	docs, err := splitDocuments("helm output", []byte(text), maxDoc)
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		file := "helm output"
		if m := sourceComment.FindSubmatch(doc.data); m != nil {
			file = string(m[1])
		}
		objs, err := parseManifests(file, doc.data, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// chartFile finds a file of a loaded chart by its path in the chart.
func chartFile(c *chart.Chart, name string) ([]byte, bool) {
	for _, f := range c.Raw {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// appNameOf is the name part of an instance name (`<namespace>_<name>`).
func appNameOf(instance string) string {
	if _, name, ok := strings.Cut(instance, "_"); ok {
		return name
	}
	return instance
}
