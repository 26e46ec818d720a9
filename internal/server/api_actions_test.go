package server_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/auth"
)

func TestAPIAppActions(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()

	r := h.do("GET", "/api/v1/applications/guestbook", admin, nil)
	var got v1alpha1.Application
	h.decode(r, &got)
	if got.Name != "guestbook" || got.Status.Sync.Status != "Synced" || len(got.Status.History) != 2 {
		t.Errorf("get: %s", r.body)
	}

	// A refresh sets the annotation; no controller removes it here, so the
	// call returns after RefreshWait with the annotation still set.
	start := time.Now()
	r = h.do("GET", "/api/v1/applications/child?refresh=hard", admin, nil)
	if r.status != http.StatusOK || h.app("child").Annotations[application.RefreshAnnotation] != "hard" {
		t.Errorf("refresh: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("refresh took %s", d)
	}
	h.wantError("bad refresh", h.do("GET", "/api/v1/applications/child?refresh=soft", admin, nil), http.StatusBadRequest, 3)

	sync := map[string]any{
		"prune": true, "dryRun": true, "revision": "main",
		"resources":   []map[string]string{{"group": "apps", "kind": "Deployment", "namespace": h.ns, "name": "web"}},
		"syncOptions": map[string]any{"items": []string{"CreateNamespace=true"}},
	}
	if r := h.do("POST", "/api/v1/applications/guestbook/sync", admin, sync); r.status != http.StatusOK {
		t.Fatalf("sync: %d %s", r.status, r.body)
	}
	op := h.app("guestbook").Operation
	want := &v1alpha1.SyncOperation{
		Revision: "main", Prune: true, DryRun: true,
		SyncStrategy: &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{}},
		Resources:    []v1alpha1.SyncOperationResource{{Group: "apps", Kind: "Deployment", Namespace: h.ns, Name: "web"}},
		SyncOptions:  v1alpha1.SyncOptions{"CreateNamespace=true"},
	}
	if op == nil || op.InitiatedBy.Username != "admin" {
		t.Fatalf("operation %+v", op)
	}
	if diff := cmp.Diff(want, op.Sync); diff != "" {
		t.Errorf("sync operation (-want +got):\n%s", diff)
	}
	h.wantError("a second sync while one is pending", h.do("POST", "/api/v1/applications/guestbook/sync", admin, map[string]any{}), http.StatusConflict, 9)
	h.wantError("sync of a resource the app does not have", h.do("POST", "/api/v1/applications/child/sync", admin,
		map[string]any{"resources": []map[string]string{{"kind": "Secret", "name": "nope"}}}), http.StatusBadRequest, 3)

	// Rollback: to history entry 1, which syncs its source and revision.
	if r := h.do("PUT", "/api/v1/applications/child/rollback", admin, map[string]any{"id": 9}); r.status != http.StatusBadRequest {
		t.Errorf("rollback to a missing id: %d %s", r.status, r.body)
	}
	h.wantError("rollback with automated sync", h.do("PUT", "/api/v1/applications/other/rollback", admin, map[string]any{"id": 1}), http.StatusBadRequest, 3)
	clearOperation(t, h, "guestbook")
	if r := h.do("PUT", "/api/v1/applications/guestbook/rollback", admin, map[string]any{"id": 1, "prune": true}); r.status != http.StatusOK {
		t.Fatalf("rollback: %d %s", r.status, r.body)
	}
	if op := h.app("guestbook").Operation; op == nil || op.Sync.Revision != "0000000000000000000000000000000000000000" || op.Sync.Source.TargetRevision != "v1" || !op.Sync.Prune {
		t.Errorf("rollback operation %+v", op)
	}

	// Delete without cascade removes the app at once; with cascade the
	// resources finalizer holds it for the controller.
	if r := h.do("DELETE", "/api/v1/applications/other?cascade=false", admin, nil); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if err := h.kube.Get(t.Context(), client.ObjectKey{Namespace: h.ns, Name: "other"}, &v1alpha1.Application{}); err == nil {
		t.Error("app other still exists after a non-cascading delete")
	}
	h.wantError("bad propagation policy", h.do("DELETE", "/api/v1/applications/child?propagationPolicy=sideways", admin, nil), http.StatusBadRequest, 3)
	if r := h.do("DELETE", "/api/v1/applications/child?cascade=true&propagationPolicy=background", admin, nil); r.status != http.StatusOK {
		t.Fatalf("cascading delete: %d %s", r.status, r.body)
	}
	child := h.app("child")
	if child.DeletionTimestamp == nil || !slices.Contains(child.Finalizers, appclient.BackgroundResourcesFinalizer) {
		t.Errorf("after a cascading delete: deleting %v, finalizers %v", child.DeletionTimestamp, child.Finalizers)
	}
	child.Finalizers = nil
	if err := h.kube.Update(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	h.wantError("unknown endpoint", h.do("GET", "/api/v1/certificates", admin, nil), http.StatusNotFound, 5)
}

// clearOperation removes a pending operation, as a controller finishing
// it would.
func clearOperation(t *testing.T, h *apiHarness, name string) {
	t.Helper()
	app := h.app(name)
	patch := client.MergeFrom(app.DeepCopy())
	app.Operation = nil
	if err := h.kube.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
}

// TestAPILocalSync writes a local sync (the request's manifests) as Argo
// CD's API does: it needs override on the app besides sync, an app with
// automated sync takes it in a dry run only, and a bad manifest is named.
func TestAPILocalSync(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	bot, err := (auth.Store{Client: h.kube, Namespace: h.ns}).IssueAPIToken(t.Context(), "bot", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h.addPolicy("p, bot, applications, get, team/*, allow\np, bot, applications, sync, team/*, allow\n")
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\n"
	local := map[string]any{"manifests": []string{manifest}, "dryRun": true}
	h.wantError("bot without override", h.do("POST", "/api/v1/applications/other/sync", bot, local), http.StatusForbidden, 7)
	h.wantError("with automated sync", h.do("POST", "/api/v1/applications/other/sync", admin,
		map[string]any{"manifests": []string{manifest}}), http.StatusBadRequest, 3)
	h.wantError("a manifest without kind", h.do("POST", "/api/v1/applications/guestbook/sync", admin,
		map[string]any{"manifests": []string{"apiVersion: v1\nmetadata: {name: x}\n"}}), http.StatusBadRequest, 3)
	if r := h.do("POST", "/api/v1/applications/guestbook/sync", admin, map[string]any{"manifests": []string{manifest}}); r.status != http.StatusOK {
		t.Fatalf("local sync: %d %s", r.status, r.body)
	}
	if op := h.app("guestbook").Operation; op == nil || !slices.Equal(op.Sync.Manifests, []string{manifest}) {
		t.Errorf("local sync operation %+v", op)
	}

	h.addPolicy("p, bot, applications, override, team/*, allow\n")
	if r := h.do("POST", "/api/v1/applications/other/sync", bot, local); r.status != http.StatusOK {
		t.Fatalf("bot's local dry run with override: %d %s", r.status, r.body)
	}
	if op := h.app("other").Operation; op == nil || !op.Sync.DryRun || len(op.Sync.Manifests) != 1 {
		t.Errorf("bot's local dry run wrote %+v", op)
	}
}
