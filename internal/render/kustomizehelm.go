package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// inflatedDir is the folder, next to a kustomization, where its inflated
// charts are written in kustomize's in-memory file system.
const inflatedDir = ".wavecd-helmcharts"

// helmInflater inflates a kustomization's helmCharts with the Helm SDK, as
// `kustomize build --enable-helm` does with a helm binary: the chart from
// chartHome (default charts/, then <name>-<version>/ when repo and version
// are set) or else pulled from repo (through the chart fetcher: mirrors,
// credentials, cache, OCI), values from valuesFile (default the chart's
// values.yaml) merged with valuesInline as valuesMerge says, then each
// additionalValuesFiles; CRDs only with includeCRDs, hooks unless
// skipHooks, tests unless skipTests.
type helmInflater struct {
	helm *Helm
	req  *Request
	opts *buildOptions
}

// inflate renders k's charts into files next to it in fsys and replaces
// its helmCharts with those files as resources.
func (h *helmInflater) inflate(ctx context.Context, c *kustomizeCopier, file, dir, ns string, k *types.Kustomization) error {
	for i, hc := range k.HelmCharts {
		hc.Namespace = firstNonEmpty(hc.Namespace, ns)
		out, err := h.render(ctx, dir, k.HelmGlobals, hc)
		if err != nil {
			return fmt.Errorf("%s: helmCharts[%d] (%s): %w", file, i, hc.Name, err)
		}
		name := fmt.Sprintf("%s/%d-%s.yaml", inflatedDir, i, hc.Name)
		if err := c.fsys.WriteFile(path.Join(repoMount, dir, name), out); err != nil {
			return err
		}
		k.Resources = append(k.Resources, name)
	}
	k.HelmCharts, k.HelmGlobals = nil, nil
	data, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return c.fsys.WriteFile(path.Join(repoMount, file), data)
}

func (h *helmInflater) render(ctx context.Context, dir string, globals *types.HelmGlobals, hc types.HelmChart) ([]byte, error) {
	if hc.Name == "" {
		return nil, errors.New("chart name cannot be empty")
	}
	loaded, err := h.load(ctx, dir, globals, hc)
	if err != nil {
		return nil, err
	}
	vals, err := h.values(dir, loaded, hc)
	if err != nil {
		return nil, err
	}
	opts := &v1alpha1.ApplicationSourceHelm{
		ReleaseName: firstNonEmpty(hc.ReleaseName, "release-name"), Namespace: firstNonEmpty(hc.Namespace, defaultNamespace),
		SkipCrds: !hc.IncludeCRDs, SkipTests: hc.SkipTests,
		KubeVersion: h.kubeVersion(hc), APIVersions: h.apiVersions(hc),
	}
	text, err := h.helm.template(ctx, h.req, opts, loaded.chart, vals)
	if err != nil {
		return nil, err
	}
	objs, err := parseHelmOutput(text, h.req.limits().MaxManifestSize)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, o := range objs {
		if _, hook := o.GetAnnotations()["helm.sh/hook"]; hook && hc.SkipHooks {
			continue
		}
		// kustomize marks what a chart generated so its namespace
		// transformer leaves it alone; the mark never reaches the output.
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[konfig.HelmGeneratedAnnotation] = "true"
		o.SetAnnotations(annotations)
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}

// kubeVersion is what `--helm-kube-version` gives: the app's Kubernetes
// version (kustomize.kubeVersion, else the cluster's), else the chart's.
func (h *helmInflater) kubeVersion(hc types.HelmChart) string {
	src := ""
	if h.req.Source.Kustomize != nil {
		src = h.req.Source.Kustomize.KubeVersion
	}
	return firstNonEmpty(h.opts.kubeVersion, src, h.req.Capabilities.KubeVersion, hc.KubeVersion)
}

func (h *helmInflater) apiVersions(hc types.HelmChart) []string {
	switch {
	case len(h.opts.apiVersions) > 0:
		return h.opts.apiVersions
	case h.req.Source.Kustomize != nil && len(h.req.Source.Kustomize.APIVersions) > 0:
		return h.req.Source.Kustomize.APIVersions
	case len(h.req.Capabilities.APIVersions) > 0:
		return h.req.Capabilities.APIVersions
	}
	return hc.ApiVersions
}

// chartHome is where kustomize looks for the chart's folder.
func chartHome(dir string, globals *types.HelmGlobals, hc types.HelmChart) (string, error) {
	home := types.HelmDefaultHome
	if globals != nil && globals.ChartHome != "" {
		home = globals.ChartHome
	}
	joined, err := source.Join(dir, home, source.JoinOptions{})
	if err != nil {
		return "", fmt.Errorf("helmGlobals.chartHome: %w", err)
	}
	if hc.Version != "" && hc.Repo != "" {
		joined = joinSlash(joined, hc.Name+"-"+hc.Version)
	}
	return joined, nil
}

func (h *helmInflater) load(ctx context.Context, dir string, globals *types.HelmGlobals, hc types.HelmChart) (*loadedChart, error) {
	home, err := chartHome(dir, globals, hc)
	if err != nil {
		return nil, err
	}
	local := joinSlash(home, hc.Name)
	if info, err := h.req.Tree.Stat(local); err == nil && info.IsDir() {
		c, err := loadTreeChart(h.req.Tree, local)
		if err != nil {
			return nil, err
		}
		if err := h.helm.addDependencies(ctx, c, h.req.Tree, local, 0); err != nil {
			return nil, err
		}
		return &loadedChart{chart: c, tree: h.req.Tree, dir: local}, nil
	}
	if hc.Repo == "" {
		return nil, fmt.Errorf("no repo specified for pull, no chart found at '%s'", local)
	}
	return h.helm.loadRepoChart(ctx, hc.Repo, hc.Name, hc.Version)
}

// values merges valuesFile (default the chart's values.yaml) with
// valuesInline as kustomize does (override: inline wins; merge: the file
// wins; replace: inline only), then each additionalValuesFiles on top.
func (h *helmInflater) values(dir string, lc *loadedChart, hc types.HelmChart) (map[string]any, error) {
	base, err := h.valuesFile(dir, lc, hc.ValuesFile)
	if err != nil {
		return nil, err
	}
	merged, err := mergeInline(base, hc.ValuesInline, hc.ValuesMerge)
	if err != nil {
		return nil, err
	}
	vals, err := loader.LoadValues(strings.NewReader(merged))
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	for i, f := range hc.AdditionalValuesFiles {
		data, err := h.readKustomizeFile(dir, f)
		if err != nil {
			return nil, fmt.Errorf("additionalValuesFiles[%d]: %w", i, err)
		}
		m, err := loader.LoadValues(strings.NewReader(string(data)))
		if err != nil {
			return nil, fmt.Errorf("additionalValuesFiles[%d]: %s: %w", i, f, err)
		}
		vals = loader.MergeMaps(vals, m)
	}
	return vals, nil
}

func (h *helmInflater) valuesFile(dir string, lc *loadedChart, file string) (string, error) {
	if file != "" {
		data, err := h.readKustomizeFile(dir, file)
		if err != nil {
			return "", fmt.Errorf("valuesFile: %w", err)
		}
		return string(data), nil
	}
	data, _ := chartFile(lc.chart, "values.yaml")
	return string(data), nil
}

// readKustomizeFile reads a file a kustomization names, relative to it.
func (h *helmInflater) readKustomizeFile(dir, file string) ([]byte, error) {
	joined, err := source.Join(dir, file, source.JoinOptions{})
	if err != nil {
		return nil, err
	}
	data, err := h.req.Tree.ReadFile(joined)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: file not found", file)
		}
		return nil, valueFileError(file, err)
	}
	return data, nil
}

func mergeInline(file string, inline map[string]any, mode string) (string, error) {
	if len(inline) == 0 {
		return file, nil
	}
	switch mode {
	case "", "override", "merge":
	case "replace":
		out, err := yaml.Marshal(inline)
		return string(out), err
	default:
		return "", fmt.Errorf("valuesMerge must be one of [merge override replace]")
	}
	if strings.TrimSpace(file) == "" {
		file = "{}"
	}
	fileNode, err := kyaml.Parse(file)
	if err != nil {
		return "", fmt.Errorf("could not parse values file into rnode: %w", err)
	}
	inlineNode, err := kyaml.FromMap(inline)
	if err != nil {
		return "", fmt.Errorf("could not parse values inline into rnode: %w", err)
	}
	var out *kyaml.RNode
	if mode == "merge" {
		out, err = merge2.Merge(fileNode, inlineNode.Copy(), kyaml.MergeOptions{})
	} else {
		out, err = merge2.Merge(inlineNode, fileNode.Copy(), kyaml.MergeOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("could not merge values: %w", err)
	}
	return out.String()
}
