package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// kustomizeCopier copies a kustomization and everything it references into
// an in-memory file system, refusing paths that leave the repository.
type kustomizeCopier struct {
	ctx     context.Context
	tree    *source.Tree
	fsys    filesys.FileSystem
	visited map[string]bool
	// helm inflates helmCharts; nil leaves them to kustomize, which
	// refuses them ("must specify --enable-helm").
	helm *helmInflater
	// topNS is the namespace the app's overrides set on the kustomization
	// in topDir.
	topDir, topNS string
}

func copyKustomization(ctx context.Context, tree *source.Tree, dir string, fsys filesys.FileSystem, helm *helmInflater) (*kustomizeCopier, error) {
	c := &kustomizeCopier{ctx: ctx, tree: tree, fsys: fsys, visited: map[string]bool{}, helm: helm}
	if _, ok := kustomizationFile(tree, dir); !ok {
		return nil, fmt.Errorf("field path: no kustomization file in %s", dir)
	}
	if helm != nil && helm.req.Source.Kustomize != nil {
		c.topDir, c.topNS = dir, helm.req.Source.Kustomize.Namespace // `kustomize edit set namespace`
	}
	return c, c.visitDir(dir, "")
}

// copyOverrideRefs copies the components and patch files that the source's
// overrides add.
func (c *kustomizeCopier) copyOverrideRefs(dir string, o *v1alpha1.ApplicationSourceKustomize) error {
	for i, comp := range o.Components {
		if err := c.copyRef("spec", dir, "", kustomizeRef{field: fmt.Sprintf("field kustomize.components[%d]", i), path: comp}); err != nil {
			return err
		}
	}
	for i, p := range o.Patches {
		if p.Path == "" {
			continue
		}
		if err := c.copyRef("spec", dir, "", kustomizeRef{field: fmt.Sprintf("field kustomize.patches[%d].path", i), path: p.Path}); err != nil {
			return err
		}
	}
	return nil
}

// visitDir copies the kustomization in dir and what it references.
// helmNS is the namespace its helmCharts inherit (from the kustomization
// that references it), as kustomize passes it down.
func (c *kustomizeCopier) visitDir(dir, helmNS string) error {
	if c.visited[dir] {
		return nil
	}
	c.visited[dir] = true
	if err := c.ctx.Err(); err != nil {
		return err
	}
	file, ok := kustomizationFile(c.tree, dir)
	if !ok {
		return nil // a plain folder: kustomize reports it if it is used wrongly
	}
	data, err := c.tree.ReadFile(file)
	if err != nil {
		return err
	}
	if err := c.fsys.WriteFile(path.Join(repoMount, file), data); err != nil {
		return err
	}
	k := &types.Kustomization{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return yamlError(file, 1, err)
	}
	if dir == c.topDir && c.topNS != "" {
		helmNS = c.topNS
	} else {
		helmNS = firstNonEmpty(k.Namespace, helmNS)
	}
	for _, r := range kustomizeRefs(k) {
		if err := c.copyRef(file, dir, helmNS, r); err != nil {
			return err
		}
	}
	if c.helm != nil && len(k.HelmCharts) > 0 {
		return c.helm.inflate(c.ctx, c, file, dir, helmNS, k)
	}
	return nil
}

// kustomizeRef is one local path a kustomization names, and the field.
type kustomizeRef struct {
	field, path string
}

func (c *kustomizeCopier) copyRef(file, dir, helmNS string, r kustomizeRef) error {
	if isRemoteKustomizeRef(r.path) {
		return fmt.Errorf("%s: %s: remote resource %q is not supported; vendor it into the repository", file, r.field, r.path)
	}
	joined, err := source.Join(dir, r.path, source.JoinOptions{})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", file, r.field, err)
	}
	info, err := c.tree.Stat(joined)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // kustomize reports the missing file in its own words
	}
	if err != nil {
		var pe *source.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %s: %w", file, r.field, &source.PathError{Path: r.path, Reason: pe.Reason})
		}
		return fmt.Errorf("%s: %s: %w", file, r.field, err)
	}
	if info.IsDir() {
		return c.visitDir(joined, helmNS)
	}
	data, err := c.tree.ReadFile(joined)
	if err != nil {
		return err
	}
	return c.fsys.WriteFile(path.Join(repoMount, joined), data)
}

// isRemoteKustomizeRef reports URLs and git shorthands kustomize would fetch.
func isRemoteKustomizeRef(p string) bool {
	return strings.Contains(p, "://") || strings.HasPrefix(p, "git@") || strings.HasPrefix(p, "github.com/")
}

// kustomizeRefs lists every local file or folder a kustomization names.
func kustomizeRefs(k *types.Kustomization) []kustomizeRef {
	var refs []kustomizeRef
	add := func(field string, paths ...string) {
		for _, p := range paths {
			if p != "" && !strings.Contains(p, "\n") {
				refs = append(refs, kustomizeRef{field: field, path: p})
			}
		}
	}
	add("resources", k.Resources...)
	add("bases", k.Bases...)
	add("components", k.Components...)
	add("crds", k.Crds...)
	add("configurations", k.Configurations...)
	add("generators", k.Generators...)
	add("transformers", k.Transformers...)
	add("validators", k.Validators...)
	add("openapi", k.OpenAPI["path"])
	for _, p := range k.PatchesStrategicMerge {
		add("patchesStrategicMerge", string(p))
	}
	for _, p := range k.Patches {
		add("patches", p.Path)
	}
	for _, p := range k.PatchesJson6902 {
		add("patchesJson6902", p.Path)
	}
	for _, r := range k.Replacements {
		add("replacements", r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		add("configMapGenerator", generatorFiles(g.GeneratorArgs)...)
	}
	for _, g := range k.SecretGenerator {
		add("secretGenerator", generatorFiles(g.GeneratorArgs)...)
	}
	return refs
}

// generatorFiles lists the files of a generator ("key=path" or "path").
func generatorFiles(g types.GeneratorArgs) []string {
	var out []string
	for _, f := range g.FileSources {
		if _, p, ok := strings.Cut(f, "="); ok {
			f = p
		}
		out = append(out, f)
	}
	out = append(out, g.EnvSources...)
	if g.EnvSource != "" {
		out = append(out, g.EnvSource)
	}
	return out
}

func resIDOf(id v1alpha1.KustomizeResId) resid.ResId {
	return resid.ResId{
		Gvk:  resid.Gvk{Group: id.Group, Version: id.Version, Kind: id.Kind},
		Name: id.Name, Namespace: id.Namespace,
	}
}
