package rehearsal

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/appset"
	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/settings"
	"github.com/wavecd/wavecd/internal/source"
)

// generated is what the root manifest's ApplicationSets make when
// generated ahead of the run.
type generated struct {
	// apps are the Applications, in the order of the sets and their
	// generators.
	apps []*unstructured.Unstructured
	// warnings name the sets that could not be generated here; the
	// ApplicationSet controller of the run reports them as conditions.
	warnings []string
}

// generateSets generates the root ApplicationSets as the run's
// ApplicationSet controller will: over the cluster Secrets of the settings
// (the in-cluster destination unless argocd-cm disables it) and the
// repositories through mirrors. The apps tell the rehearsal which
// repositories to mirror and which apps to wait for.
func generateSets(ctx context.Context, root []*unstructured.Unstructured, s *settings.Settings, mirrors source.Mirrors, cacheDir string) generated {
	var out generated
	sets := manifest.Sets(root)
	if len(sets) == 0 {
		return out
	}
	clusters, objects, err := appset.FromSettings(s)
	if err != nil {
		out.warnings = append(out.warnings, fmt.Sprintf("cluster Secrets of the settings: %v", err))
	}
	in := appset.Inputs{
		Repos:    source.NewRepos(source.ReposOptions{CacheDir: cacheDir, Mirrors: mirrors}),
		Clusters: clusters,
		Objects:  objects,
	}
	for _, o := range sets {
		apps, err := generateSet(ctx, o, in)
		if err != nil {
			out.warnings = append(out.warnings, fmt.Sprintf("ApplicationSet %s: %v (left to the ApplicationSet controller)", o.GetName(), err))
			continue
		}
		out.apps = append(out.apps, apps...)
	}
	return out
}

// generateSet generates one ApplicationSet of the root manifest.
func generateSet(ctx context.Context, o *unstructured.Unstructured, in appset.Inputs) ([]*unstructured.Unstructured, error) {
	set := &v1alpha1.ApplicationSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, set); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	g, err := appset.Generate(ctx, set, in)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(g.Apps))
	for i := range g.Apps {
		app := &g.Apps[i]
		app.Namespace = set.Namespace
		u, err := application.ToUnstructured(app)
		if err != nil {
			return nil, fmt.Errorf("encode Application %s: %w", app.Name, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// withGenerated are the root manifest's objects followed by the
// Applications its ApplicationSets make: the apps a rehearsal renders
// ahead and waits for first. root is not changed.
func withGenerated(root, generated []*unstructured.Unstructured) []*unstructured.Unstructured {
	return append(slices.Clip(root), generated...)
}

// addMirrors maps the Git repositories of apps to path where mirrors has
// no entry yet: --mirror flags and the root's own win.
func addMirrors(mirrors source.Mirrors, apps []*unstructured.Unstructured, path string) {
	for url, p := range manifest.Mirrors(apps, path) {
		if _, ok := mirrors[url]; !ok {
			mirrors[url] = p
		}
	}
}

// describeRoot names the root's Applications and ApplicationSets, with
// the Applications generated ahead.
func describeRoot(root, generated []*unstructured.Unstructured) string {
	var parts []string
	if names := manifest.Names(root); len(names) > 0 {
		parts = append(parts, "Applications: "+strings.Join(names, ", "))
	}
	var sets []string
	for _, o := range manifest.Sets(root) {
		sets = append(sets, o.GetName())
	}
	if len(sets) > 0 {
		made := "none generated ahead"
		if names := manifest.Names(generated); len(names) > 0 {
			made = "making " + strings.Join(names, ", ")
		}
		parts = append(parts, fmt.Sprintf("ApplicationSets: %s, %s", strings.Join(sets, ", "), made))
	}
	return strings.Join(parts, "; ")
}
