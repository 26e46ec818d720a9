package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/testenv"
)

// cmPlugin prints a ConfigMap named after the app, with the value of the
// app's plugin env COLOR.
const cmPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cm
spec:
  generate:
    command: [sh, -c]
    args: ['printf "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  color: %s\n" "$ARGOCD_APP_NAME" "$ARGOCD_ENV_COLOR"']
`

// TestArgoSources runs apps of the source kinds Argo CD repositories use
// beyond plain YAML: a Config Management Plugin, a plugin that is not
// configured, Jsonnet with a top-level argument, a field wavecd does not
// implement, and a live object marked IgnoreExtraneous.
func TestArgoSources(t *testing.T) {
	t.Parallel()
	plugins := t.TempDir()
	if err := os.WriteFile(filepath.Join(plugins, "cm.yaml"), []byte(cmPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startController(t, Options{PluginsDir: plugins})
	repo := testenv.NewGitRepo(t, map[string]string{
		"plug/kustomization.yaml": "resources: [never-rendered.yaml]\n",
		"jsonnet/main.jsonnet":    "function(color) {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'from-jsonnet'}, data: {color: color}}",
		"tagged/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tagged\n",
	})
	ctx := context.Background()
	newApp := func(name, path string, src func(*v1alpha1.ApplicationSource)) {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo.Dir, Path: path, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: h.ns},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
			},
		}
		src(app.Spec.Source)
		if err := h.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	newApp("plug", "plug", func(s *v1alpha1.ApplicationSource) {
		s.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: "cm", Env: v1alpha1.Env{{Name: "COLOR", Value: "blue"}}}
	})
	newApp("nix", "plug", func(s *v1alpha1.ApplicationSource) { s.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: "nix"} })
	newApp("jsonnet", "jsonnet", func(s *v1alpha1.ApplicationSource) {
		s.Directory = &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{TLAs: []v1alpha1.JsonnetVar{{Name: "color", Value: "green"}}}}
	})
	newApp("tagged", "tagged", func(s *v1alpha1.ApplicationSource) { s.TagPrefix = "web/" })

	t.Run("plugin", func(t *testing.T) {
		app := h.in(t).waitApp("plug", 60*time.Second, "Synced and Healthy", syncedHealthy)
		if app.Status.SourceType != "Plugin" {
			t.Errorf("sourceType = %q, want Plugin", app.Status.SourceType)
		}
		cm := &corev1.ConfigMap{}
		if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "plug"}, cm); err != nil || cm.Data["color"] != "blue" {
			t.Errorf("the plugin's ConfigMap: %v %v", cm.Data, err)
		}
	})
	t.Run("plugin not configured", func(t *testing.T) {
		app := h.in(t).waitApp("nix", 60*time.Second, "a ComparisonError", func(a *v1alpha1.Application) bool {
			return hasCondition(a, v1alpha1.ApplicationConditionComparisonError)
		})
		msg := conditionMessage(app, v1alpha1.ApplicationConditionComparisonError)
		if !strings.Contains(msg, `could not find cmp-server plugin with name "nix" supporting the given repository`) {
			t.Errorf("ComparisonError = %q, want it to name the plugin", msg)
		}
		if len(app.Status.Resources) != 0 || app.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
			t.Errorf("an app whose plugin is missing rendered something: %s", describe(app))
		}
	})
	t.Run("jsonnet", func(t *testing.T) {
		h.in(t).waitApp("jsonnet", 60*time.Second, "Synced and Healthy", syncedHealthy)
		cm := &corev1.ConfigMap{}
		if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "from-jsonnet"}, cm); err != nil || cm.Data["color"] != "green" {
			t.Errorf("the Jsonnet ConfigMap: %v %v", cm.Data, err)
		}
	})
	t.Run("unsupported field", func(t *testing.T) {
		app := h.in(t).waitApp("tagged", 60*time.Second, "an UnsupportedFieldWarning", func(a *v1alpha1.Application) bool {
			return hasCondition(a, v1alpha1.ApplicationConditionUnsupportedFieldWarning) && syncedHealthy(a)
		})
		if msg := conditionMessage(app, v1alpha1.ApplicationConditionUnsupportedFieldWarning); !strings.Contains(msg, "spec.source.tagPrefix") {
			t.Errorf("condition = %q", msg)
		}
	})
	t.Run("IgnoreExtraneous", func(t *testing.T) {
		h := h.in(t)
		extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "generated", Annotations: map[string]string{
			kube.AnnotationTrackingID: "tagged:/ConfigMap:" + h.ns + "/generated", kube.AnnotationInstallationID: h.ns,
			AnnotationCompareOptions: "IgnoreExtraneous",
		}}}
		if err := h.c.Create(ctx, extra); err != nil {
			t.Fatal(err)
		}
		h.refresh("tagged")
		app := h.waitApp("tagged", 60*time.Second, "the extraneous ConfigMap listed", func(a *v1alpha1.Application) bool {
			for _, r := range a.Status.Resources {
				if r.Name == "generated" {
					return r.RequiresPruning
				}
			}
			return false
		})
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			t.Errorf("an IgnoreExtraneous object made the app %s", app.Status.Sync.Status)
		}
	})
}
