package rehearsal

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// eksAddons is a repository in the EKS add-ons style: its root is an
// ApplicationSet over cluster Secrets, which come from the settings file.
const eksAddons = "testdata/eks-addons"

// TestUpBootstrapsFromAnApplicationSet rehearses eksAddons with the
// ApplicationSet as the root: it is generated ahead over the settings'
// cluster Secrets (so the repository its Applications name from a Secret's
// annotation is mirrored to the one under test), applied, and the
// ApplicationSet controller makes the one Application for the labelled
// cluster, which syncs and turns Healthy.
func TestUpBootstrapsFromAnApplicationSet(t *testing.T) {
	e := newRehearsalEnv(t)
	repo, err := filepath.Abs(eksAddons)
	if err != nil {
		t.Fatal(err)
	}
	out := &testenv.SyncBuffer{}
	u := e.up("", out)
	u.Repo, u.Root, u.Settings, u.Fresh, u.TimeScale = repo, "bootstrap/addons.yaml", filepath.Join(repo, "settings.yaml"), true, 0.1
	e.run("ApplicationSet root", u, out)
	text := out.String()
	if want := "ApplicationSets: addons-metrics-server, making addon-in-cluster-metrics-server"; !strings.Contains(text, want) {
		t.Errorf("the output does not say %q", want)
	}
	c := e.client()
	apps := &v1alpha1.ApplicationList{}
	if err := c.List(t.Context(), apps, client.InNamespace(Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(apps.Items) != 1 || apps.Items[0].Name != "addon-in-cluster-metrics-server" {
		t.Fatalf("Applications %v, want addon-in-cluster-metrics-server alone", appNames(apps))
	}
	app := apps.Items[0]
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || app.Status.Health.Status != "Healthy" {
		t.Errorf("%s: %s/%s", app.Name, app.Status.Sync.Status, app.Status.Health.Status)
	}
	if owners := app.OwnerReferences; len(owners) != 1 || owners[0].Kind != v1alpha1.ApplicationSetKind {
		t.Errorf("%s is owned by %v, want the ApplicationSet", app.Name, owners)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "kube-system", Name: "metrics-server"}, d); err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 1 {
		t.Errorf("metrics-server: %d ready replicas, want 1", d.Status.ReadyReplicas)
	}
}

func appNames(list *v1alpha1.ApplicationList) []string {
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Name)
	}
	return out
}
