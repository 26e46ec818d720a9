package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/testenv"
)

// dryRepo is a dry source as Argo CD's hydrator examples have one: a
// Kustomize base and a dev overlay.
func dryRepo(t *testing.T) *testenv.GitRepo {
	return testenv.NewGitRepo(t, map[string]string{
		"guestbook/base/kustomization.yaml":             "resources:\n- settings.yaml\n- web.yaml\n",
		"guestbook/base/settings.yaml":                  guestbookConfigMap,
		"guestbook/base/web.yaml":                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels:\n    tier: front\n",
		"guestbook/overlays/dev/kustomization.yaml":     "namePrefix: dev-\nresources:\n- ../../base\n",
		"guestbook/overlays/staging/kustomization.yaml": "namePrefix: staging-\nresources:\n- ../../base\n",
	})
}

func applyFile(t *testing.T, h *harness, name, repo string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hydrator", name))
	if err != nil {
		t.Fatal(err)
	}
	h.apply(strings.ReplaceAll(string(raw), "REPO", repo))
}

func hydrated(drySHA string) func(*v1alpha1.Application) bool {
	return func(a *v1alpha1.Application) bool {
		st := a.Status.SourceHydrator
		return st != nil && st.CurrentOperation != nil && st.CurrentOperation.Phase == v1alpha1.HydrateOperationPhaseHydrated &&
			st.CurrentOperation.DrySHA == drySHA && syncedHealthy(a)
	}
}

// TestSourceHydrator hydrates an Argo CD-shaped app: the dry overlay is
// rendered and committed to environments/dev in Argo CD's layout, then
// synced from there; a dry change is a new commit and a new sync (asked
// for with the hydrate annotation); a dry commit that changes no manifest
// moves only the note (asked for with a refresh). Two apps of one group
// (same dry source and revision, same branch) are hydrated in one commit;
// hydrating to the root, or to another app's folder, is refused before
// anything is written.
func TestSourceHydrator(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{Hydrator: true})
	repo := dryRepo(t)
	dry := repo.Git("rev-parse", "HEAD")
	applyFile(t, h, "app.yaml", repo.Dir)
	applyFile(t, h, "app-staging.yaml", repo.Dir)
	h.waitApp("guestbook-dev", 60*time.Second, "hydrated and synced", hydrated(dry))
	h.waitApp("guestbook-staging", 60*time.Second, "hydrated and synced", hydrated(dry))
	// Created together, the two apps are hydrated in one commit, or in
	// two when the first hydration ran before the second app was seen;
	// either way both end up at the branch's head.
	head := repo.Git("rev-parse", "environments/dev")
	for _, name := range []string{"guestbook-dev", "guestbook-staging"} {
		h.waitApp(name, 60*time.Second, "hydrated to and synced at "+head, func(a *v1alpha1.Application) bool {
			return hydrated(dry)(a) && a.Status.SourceHydrator.CurrentOperation.HydratedSHA == head && a.Status.Sync.Revision == head
		})
	}
	want, err := os.ReadFile(filepath.Join("testdata", "hydrator", "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := repo.Git("show", "environments/dev:guestbook-dev/manifest.yaml"); got != strings.TrimSpace(string(want)) {
		t.Errorf("manifest.yaml:\n%s\nwant:\n%s", got, want)
	}
	checkLayout(t, repo, dry, "initial")
	if got := configMapColor(t, h, "dev-settings"); got != "blue" {
		t.Errorf("dev-settings color %q, want blue", got)
	}

	before := repo.Git("rev-list", "--count", "environments/dev")
	green := repo.Commit(map[string]string{"guestbook/base/settings.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "paint it green\n\nThe dev team asked.")
	h.annotate("guestbook-dev", v1alpha1.AnnotationHydrate, "normal")
	h.waitApp("guestbook-dev", 60*time.Second, "hydrated from the green commit", hydrated(green))
	h.waitApp("guestbook-dev", 60*time.Second, "green synced", func(*v1alpha1.Application) bool { return configMapColor(t, h, "dev-settings") == "green" })
	h.waitApp("guestbook-staging", 60*time.Second, "hydrated from the green commit", hydrated(green))
	wantMsg := green[:7] + ": paint it green\n\nThe dev team asked.\n\nCo-authored-by: test <test@example.test>"
	if got := repo.Git("log", "-1", "--format=%B", "environments/dev"); got != wantMsg {
		t.Errorf("commit message:\n%s\nwant:\n%s", got, wantMsg)
	}
	// One commit for the group: both apps' folders changed in it.
	changed := repo.Git("show", "--name-only", "--format=", "environments/dev")
	for _, f := range []string{"guestbook-dev/manifest.yaml", "guestbook-staging/manifest.yaml"} {
		if !strings.Contains(changed, f) {
			t.Errorf("the green commit does not change %s:\n%s", f, changed)
		}
	}
	if n, want := repo.Git("rev-list", "--count", "environments/dev"), fmt.Sprint(atoi(t, before)+1); n != want {
		t.Errorf("environments/dev has %s commits, want %s: one for the group's dry change", n, want)
	}

	head = repo.Git("rev-parse", "environments/dev")
	docs := repo.Commit(map[string]string{"guestbook/NOTES.md": "not rendered\n"}, "notes")
	h.refresh("guestbook-dev") // a refresh asks for a hydration too
	app := h.waitApp("guestbook-dev", 60*time.Second, "hydrated from a commit that changes no manifest", hydrated(docs))
	if got := repo.Git("rev-parse", "environments/dev"); got != head || app.Status.SourceHydrator.CurrentOperation.HydratedSHA != head {
		t.Errorf("a commit changing no manifest moved environments/dev from %s to %s", head, got)
	}
	if got := repo.Git("notes", "--ref", "hydrator.metadata", "show", head); got != `{"drySha":"`+docs+`"}` {
		t.Errorf("note on %s: %s", head, got)
	}

	applyFile(t, h, "root-path.yaml", repo.Dir)
	app = h.waitApp("guestbook-root", 60*time.Second, "hydration refused", func(a *v1alpha1.Application) bool {
		st := a.Status.SourceHydrator
		return st != nil && st.CurrentOperation != nil && st.CurrentOperation.Phase == v1alpha1.HydrateOperationPhaseFailed
	})
	wantErr := `Failed to hydrate: app is configured to hydrate to the repository root (branch "environments/root", path ".") which is not allowed`
	if got := app.Status.SourceHydrator.CurrentOperation.Message; got != wantErr {
		t.Errorf("message %q, want %q", got, wantErr)
	}
	if refs := repo.Git("branch", "--list", "environments/root"); refs != "" {
		t.Errorf("the refused app created a branch: %s", refs)
	}
	applyFile(t, h, "twin.yaml", repo.Dir)
	app = h.waitApp("guestbook-twin", 60*time.Second, "hydration refused", func(a *v1alpha1.Application) bool {
		st := a.Status.SourceHydrator
		return st != nil && st.CurrentOperation != nil && st.CurrentOperation.Phase == v1alpha1.HydrateOperationPhaseFailed
	})
	wantErr = "Failed to hydrate: app guestbook-dev hydrator uses the same destination: repo=" + repo.Dir + ", path=guestbook-dev"
	if got := app.Status.SourceHydrator.CurrentOperation.Message; got != wantErr {
		t.Errorf("message %q, want %q", got, wantErr)
	}
	app = h.app("guestbook-root")
	// A refresh through the API (the annotations) tries a failed
	// hydration again at once, not after the two minutes' wait.
	failedAt := app.Status.SourceHydrator.CurrentOperation.FinishedAt.Time
	time.Sleep(1100 * time.Millisecond) // status times have whole seconds
	if err := (application.AnnotationRefresher{Client: h.c}).Refresh(t.Context(), h.ns, "guestbook-root", application.RefreshNormal); err != nil {
		t.Fatal(err)
	}
	h.waitApp("guestbook-root", 60*time.Second, "hydration tried again", func(a *v1alpha1.Application) bool {
		op := a.Status.SourceHydrator.CurrentOperation
		_, asked := a.Annotations[v1alpha1.AnnotationHydrate]
		return op.FinishedAt.After(failedAt) && op.Phase == v1alpha1.HydrateOperationPhaseFailed && !asked
	})
}

// checkLayout checks the files, author and note of the hydrated branch's
// head, hydrated from dry whose subject is subject.
func checkLayout(t *testing.T, repo *testenv.GitRepo, dry, subject string) {
	t.Helper()
	var local map[string]any
	if err := json.Unmarshal([]byte(repo.Git("show", "environments/dev:guestbook-dev/hydrator.metadata")), &local); err != nil {
		t.Fatal(err)
	}
	if local["drySha"] != dry || local["repoURL"] != repo.Dir {
		t.Errorf("guestbook-dev/hydrator.metadata: %v", local)
	}
	var root map[string]any
	if err := json.Unmarshal([]byte(repo.Git("show", "environments/dev:hydrator.metadata")), &root); err != nil {
		t.Fatal(err)
	}
	if root["drySha"] != dry || root["subject"] != subject || root["author"] != "test <test@example.test>" || root["date"] == "" {
		t.Errorf("hydrator.metadata: %v", root)
	}
	if readme := repo.Git("show", "environments/dev:guestbook-dev/README.md"); !strings.Contains(readme, "git checkout "+dry) {
		t.Errorf("README.md:\n%s", readme)
	}
	if got := repo.Git("show", "environments/dev:.gitattributes"); !strings.Contains(got, "**/hydrator.metadata linguist-generated=true") {
		t.Errorf(".gitattributes: %q", got)
	}
	log := strings.Split(repo.Git("log", "--format=%s|%an <%ae>", "environments/dev"), "\n")
	if want := dry[:7] + ": " + subject + "|Argo CD <argo-cd@example.com>"; log[0] != want {
		t.Errorf("head of environments/dev: %s, want %s", log[0], want)
	}
	if want := "Initial commit for environments/dev|Argo CD <argo-cd@example.com>"; log[len(log)-1] != want {
		t.Errorf("first commit of environments/dev: %s, want %s", log[len(log)-1], want)
	}
	head := repo.Git("rev-parse", "environments/dev")
	if got := repo.Git("notes", "--ref", "hydrator.metadata", "show", head); got != `{"drySha":"`+dry+`"}` {
		t.Errorf("note: %s", got)
	}
}

// configMapColor is the color of a ConfigMap of the namespace ("" when
// there is none yet).
func configMapColor(t *testing.T, h *harness, name string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return ""
		}
		t.Fatal(err)
	}
	return cm.Data["color"]
}

// TestHydrationOff: with the hydrator off (Argo CD's default), an app
// with a source hydrator is warned about and nothing is hydrated.
func TestHydrationOff(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
		DrySource: v1alpha1.DrySource{RepoURL: "r", Path: "dry"}, SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "prod"}}}}
	off, on := &hydration{}, &hydration{enabled: true}
	if got := off.unsupported(app); got != hydrationOff {
		t.Errorf("off: %q", got)
	}
	if hydrated, wait := off.run(t.Context(), opRequest{app: app}, askedRefresh); hydrated || wait != 0 || app.Status.SourceHydrator != nil {
		t.Errorf("off: hydrated %v, wait %s, status %+v", hydrated, wait, app.Status.SourceHydrator)
	}
	if got := on.unsupported(app); got != "" {
		t.Errorf("on: %q", got)
	}
	if got := off.unsupported(&v1alpha1.Application{}); got != "" {
		t.Errorf("an app without a hydrator: %q", got)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
