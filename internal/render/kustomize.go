package render

import (
	"context"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// repoMount is where a repository appears in kustomize's in-memory file
// system; nothing exists outside it.
const repoMount = "/repo"

// Kustomize renders kustomizations with kustomize's krusty API, like
// `kustomize build` with argocd-cm's kustomize.buildOptions (by default
// legacy resource order, load restrictor RootOnly), after applying the
// source's overrides the way Argo CD's `kustomize edit` calls do. With
// --enable-helm, helmCharts are inflated with the Helm SDK (see
// helmInflater). Kustomize reads an in-memory copy of the files the
// kustomization references, so it cannot reach outside the repository.
type Kustomize struct {
	// Helm inflates helmCharts; nil refuses them.
	Helm *Helm
}

// Render implements Renderer.
func (k Kustomize) Render(ctx context.Context, req *Request) (*Result, error) {
	dir, err := appPath(req.Tree, req.Source.Path)
	if err != nil {
		return nil, err
	}
	version := ""
	if req.Source.Kustomize != nil {
		version = req.Source.Kustomize.Version
	}
	bo, err := parseBuildOptions(req.Kustomize, version)
	if err != nil {
		return nil, err
	}
	fsys := filesys.MakeFsInMemory()
	var inflater *helmInflater
	if bo.enableHelm {
		helm := k.Helm
		if helm == nil {
			helm = &Helm{}
		}
		inflater = &helmInflater{helm: helm, req: req, opts: bo}
	}
	copier, err := copyKustomization(ctx, req.Tree, dir, fsys, inflater)
	if err != nil {
		return nil, err
	}
	if o := req.Source.Kustomize; o != nil {
		if err := applyOverrides(req.Tree, dir, fsys, o); err != nil {
			return nil, err
		}
		if err := copier.copyOverrideRefs(dir, o); err != nil {
			return nil, err
		}
	}
	resMap, err := krusty.MakeKustomizer(bo.krusty()).Run(fsys, path.Join(repoMount, dir))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %s", req.Source.Path, strings.ReplaceAll(err.Error(), repoMount+"/", ""))
	}
	out, err := resMap.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", req.Source.Path, err)
	}
	what := "kustomize build " + req.Source.Path
	if err := req.budget().Take(what, int64(len(out))); err != nil {
		return nil, err
	}
	objs, err := parseManifests(what, out, req.limits().MaxManifestSize)
	if err != nil {
		return nil, err
	}
	return &Result{Objects: objs, Revisions: []string{req.Tree.Revision()}, Warnings: bo.warnings, Size: int64(len(out))}, nil
}

// kustomizationFile returns the name of the kustomization file in dir.
func kustomizationFile(tree *source.Tree, dir string) (string, bool) {
	for _, name := range kustomizationFiles {
		if isFile(tree, joinSlash(dir, name)) {
			return joinSlash(dir, name), true
		}
	}
	return "", false
}

// applyOverrides edits the app's kustomization like Argo CD's
// `kustomize edit set|add` calls.
func applyOverrides(tree *source.Tree, dir string, fsys filesys.FileSystem, o *v1alpha1.ApplicationSourceKustomize) error {
	file, ok := kustomizationFile(tree, dir)
	if !ok {
		return fmt.Errorf("field path: no kustomization file in %s", dir)
	}
	data, err := fsys.ReadFile(path.Join(repoMount, file))
	if err != nil {
		return err
	}
	k := &types.Kustomization{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := editKustomization(tree, dir, k, o); err != nil {
		return err
	}
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return fsys.WriteFile(path.Join(repoMount, file), out)
}

func editKustomization(tree *source.Tree, dir string, k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize) error {
	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	for _, img := range o.Images {
		setImage(k, string(img))
	}
	if err := addLabels(k, o); err != nil {
		return err
	}
	if err := addAnnotations(k, o); err != nil {
		return err
	}
	for _, r := range o.Replicas {
		setReplicas(k, types.Replica{Name: r.Name, Count: int64(r.Count.IntValue())})
	}
	for i, p := range o.Patches {
		if p.Path != "" {
			if _, err := source.Join(dir, p.Path, source.JoinOptions{}); err != nil {
				return fmt.Errorf("field kustomize.patches[%d].path: %w", i, err)
			}
		}
		k.Patches = append(k.Patches, convertPatch(p))
	}
	for i, c := range o.Components {
		if err := addComponent(tree, dir, k, c, o.IgnoreMissingComponents); err != nil {
			return fmt.Errorf("field kustomize.components[%d]: %w", i, err)
		}
	}
	return nil
}

// setImage applies "[old=]new[:tag|@digest]" like `kustomize edit set image`.
func setImage(k *types.Kustomization, spec string) {
	old, newImg, hasOld := strings.Cut(spec, "=")
	if !hasOld {
		newImg = spec
	}
	img := types.Image{}
	name := newImg
	if at := strings.Index(newImg, "@"); at >= 0 {
		name, img.Digest = newImg[:at], newImg[at+1:]
	} else if c := strings.LastIndex(newImg, ":"); c > strings.LastIndex(newImg, "/") {
		name, img.NewTag = newImg[:c], newImg[c+1:]
	}
	img.Name = name
	if hasOld {
		img.Name, img.NewName = old, name
	}
	for i := range k.Images {
		if k.Images[i].Name == img.Name {
			k.Images[i] = img
			return
		}
	}
	k.Images = append(k.Images, img)
}

func addLabels(k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize) error {
	if len(o.CommonLabels) == 0 {
		return nil
	}
	if o.LabelWithoutSelector {
		k.Labels = append(k.Labels, types.Label{Pairs: o.CommonLabels, IncludeTemplates: o.LabelIncludeTemplates})
		return nil
	}
	var err error
	k.CommonLabels, err = mergeCommon(k.CommonLabels, o.CommonLabels, o.ForceCommonLabels, "commonLabels", "label")
	return err
}

func addAnnotations(k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize) error {
	var err error
	k.CommonAnnotations, err = mergeCommon(k.CommonAnnotations, o.CommonAnnotations, o.ForceCommonAnnotations, "commonAnnotations", "annotation")
	return err
}

// mergeCommon adds labels or annotations like `kustomize edit add`, which
// refuses to overwrite a key unless forced.
func mergeCommon(dst, add map[string]string, force bool, field, what string) (map[string]string, error) {
	if len(add) == 0 {
		return dst, nil
	}
	if dst == nil {
		dst = map[string]string{}
	}
	for key, v := range add {
		if _, exists := dst[key]; exists && !force {
			return nil, fmt.Errorf("field kustomize.%s: %s %q already in the kustomization; set force%s to override it", field, what, key, strings.ToUpper(field[:1])+field[1:])
		}
		dst[key] = v
	}
	return dst, nil
}

func setReplicas(k *types.Kustomization, r types.Replica) {
	for i := range k.Replicas {
		if k.Replicas[i].Name == r.Name {
			k.Replicas[i] = r
			return
		}
	}
	k.Replicas = append(k.Replicas, r)
}

func convertPatch(p v1alpha1.KustomizePatch) types.Patch {
	out := types.Patch{Path: p.Path, Patch: p.Patch}
	if p.Target != nil {
		out.Target = &types.Selector{
			ResId:              resIDOf(p.Target.KustomizeResId),
			AnnotationSelector: p.Target.AnnotationSelector, LabelSelector: p.Target.LabelSelector,
		}
	}
	if len(p.Options) > 0 {
		out.Options = &types.PatchArgs{AllowNameChange: p.Options["allowNameChange"], AllowKindChange: p.Options["allowKindChange"]}
	}
	return out
}

func addComponent(tree *source.Tree, dir string, k *types.Kustomization, c string, ignoreMissing bool) error {
	joined, err := source.Join(dir, c, source.JoinOptions{})
	if err != nil {
		return err
	}
	if _, err := tree.Stat(joined); err != nil {
		if ignoreMissing {
			return nil
		}
		return fmt.Errorf("component %s: %w", c, err)
	}
	k.Components = append(k.Components, c)
	return nil
}
