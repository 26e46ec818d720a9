package rehearsal

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/rehearsal/timeline"
	"github.com/wavecd/wavecd/internal/render"
	"github.com/wavecd/wavecd/internal/source"
)

// The local cluster's expected Services: Services its simulated pods count
// as requirements before they exist (a client of a Service that a later
// wave creates crash-loops until that Service is ready, as on a real
// cluster). wavecd-localcluster reads them from this ConfigMap, one
// namespace/name a line.
const (
	expectedServicesNamespace = "kube-system"
	expectedServicesConfigMap = "localcluster-expected-services"
	expectedServicesKey       = "services"
)

// Bounds of the bootstrap's inventory: apps of apps nest, and a broken
// generator could make many.
const (
	maxInventoryDepth = 6
	maxInventoryApps  = 500
)

// inventory is what rendering the whole bootstrap found.
type inventory struct {
	services []string // namespace/name, sorted
	apps     int
	warnings []string
}

// bootstrapServices renders the root Applications and, recursively, the
// Applications they make, and lists every Service they would create. An
// app that does not render is named in a warning and left out.
func bootstrapServices(ctx context.Context, root []*unstructured.Unstructured, mirrors source.Mirrors, cacheDir string, caps render.Capabilities) inventory {
	engine := render.NewEngine(render.EngineOptions{
		Repos:  source.NewRepos(source.ReposOptions{CacheDir: cacheDir, Mirrors: mirrors}),
		Charts: source.NewCharts(source.ChartsOptions{Mirrors: mirrors}),
	})
	var inv inventory
	seen := map[string]bool{}
	queue := manifest.Apps(root)
	for depth := 0; len(queue) > 0 && depth < maxInventoryDepth; depth++ {
		var next []*unstructured.Unstructured
		for _, o := range queue {
			if inv.apps >= maxInventoryApps {
				inv.warnings = append(inv.warnings, fmt.Sprintf("more than %d Applications: the rest are not looked at", maxInventoryApps))
				return inv.sorted(seen)
			}
			inv.apps++
			next = append(next, inv.renderApp(ctx, engine, o, seen, caps)...)
		}
		queue = next
	}
	return inv.sorted(seen)
}

// renderApp renders one Application, records its Services and returns the
// Applications it makes.
func (inv *inventory) renderApp(ctx context.Context, engine *render.Engine, o *unstructured.Unstructured, seen map[string]bool, caps render.Capabilities) []*unstructured.Unstructured {
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, app); err != nil {
		inv.warnings = append(inv.warnings, fmt.Sprintf("Application %s: %v", o.GetName(), err))
		return nil
	}
	res, err := engine.RenderApp(ctx, app, caps)
	if err != nil {
		inv.warnings = append(inv.warnings, fmt.Sprintf("Application %s does not render: %s", app.Name, timeline.FirstLine(err.Error())))
		return nil
	}
	var children []*unstructured.Unstructured
	for _, obj := range res.Objects {
		switch {
		case obj.GetKind() == "Service" && obj.GroupVersionKind().Group == "":
			ns := obj.GetNamespace()
			if ns == "" {
				ns = app.Spec.Destination.Namespace
			}
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			seen[ns+"/"+obj.GetName()] = true
		case manifest.IsApplication(obj):
			children = append(children, obj)
		}
	}
	return children
}

func (inv inventory) sorted(seen map[string]bool) inventory {
	for k := range seen {
		inv.services = append(inv.services, k)
	}
	slices.Sort(inv.services)
	return inv
}

// capabilities are the local cluster's, as the controller hands them to
// Helm (its version and API versions; the bootstrap's own CRDs are not
// there yet); what cannot be read is left to Helm's defaults.
func (b *bootstrap) capabilities() (render.Capabilities, error) {
	c, err := kube.New(b.cfg)
	if err != nil {
		return render.Capabilities{}, err
	}
	version, err := c.ServerVersion()
	if err != nil {
		return render.Capabilities{}, err
	}
	apiVersions, err := c.APIVersions()
	if err != nil {
		return render.Capabilities{}, err
	}
	return render.NewCapabilities(version, apiVersions), nil
}

// expectServices writes the bootstrap's Services to the local cluster's
// expected Services.
func (b *bootstrap) expectServices(ctx context.Context, services []string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: expectedServicesNamespace, Name: expectedServicesConfigMap},
		Data: map[string]string{expectedServicesKey: strings.Join(services, "\n")}}
	err := b.client.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		err = b.client.Update(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("write the expected Services: %w", err)
	}
	return nil
}
