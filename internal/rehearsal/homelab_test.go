package rehearsal

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// homelab is the seven-wave example, relative to this package.
const homelab = "../../examples/homelab-waves"

// homelabWaves are the example's apps by wave: three ApplicationSets
// generate them, and each wave depends on the one before.
var homelabWaves = map[int][]string{
	0: {"networking", "secrets"},
	1: {"storage"},
	2: {"backup-checker"},
	4: {"cert-manager"},
	5: {"kube-prometheus"},
	6: {"home-assistant", "jellyfin"},
}

// waveTimes is when a wave's first sync started and its last app turned
// Healthy, from the Applications' status.
type waveTimes struct {
	wave                  int
	firstStart, lastReady time.Time
}

// TestUpBootstrapsTheHomelab rehearses examples/homelab-waves with
// wavecd's defaults from an empty cluster: a root app, three
// ApplicationSets, eight apps in waves 0, 1, 2, 4, 5 and 6. Every wave's
// first sync must start at or after the previous wave's last app turned
// Healthy, as the cluster records it (history deployStartedAt and
// health.lastTransitionTime), and the summary lists the apps in wave order.
func TestUpBootstrapsTheHomelab(t *testing.T) {
	e := newRehearsalEnv(t)
	repo, err := filepath.Abs(homelab)
	if err != nil {
		t.Fatal(err)
	}
	out := &testenv.SyncBuffer{}
	u := e.up("", out)
	u.Repo, u.Fresh = repo, true
	took := e.run("homelab", u, out)
	waves := e.homelabWaves()
	origin := e.rootCreated()
	var report []string
	for i, w := range waves {
		report = append(report, fmt.Sprintf("wave %d: first sync %5.1fs, last Healthy %5.1fs (%4.1fs)", w.wave,
			w.firstStart.Sub(origin).Seconds(), w.lastReady.Sub(origin).Seconds(), w.lastReady.Sub(w.firstStart).Seconds()))
		if i > 0 && w.firstStart.Before(waves[i-1].lastReady) {
			t.Errorf("wave %d's first sync started at %s, before wave %d's last app was Healthy at %s", w.wave,
				w.firstStart.Format(time.TimeOnly), waves[i-1].wave, waves[i-1].lastReady.Format(time.TimeOnly))
		}
	}
	t.Logf("homelab: wall time %s (cluster start included); times from the root's creation, to the second:\n%s",
		took.Round(100*time.Millisecond), strings.Join(report, "\n"))
	checkSummaryOrder(t, out.String())
}

// homelabWaves reads the apps' status and returns each wave's times, in
// wave order.
func (e *rehearsalEnv) homelabWaves() []waveTimes {
	e.t.Helper()
	apps := &v1alpha1.ApplicationList{}
	if err := e.client().List(e.t.Context(), apps, client.InNamespace(Namespace)); err != nil {
		e.t.Fatal(err)
	}
	byName := map[string]*v1alpha1.Application{}
	for i := range apps.Items {
		byName[apps.Items[i].Name] = &apps.Items[i]
	}
	var out []waveTimes
	for _, wave := range slices.Sorted(maps.Keys(homelabWaves)) {
		w := waveTimes{wave: wave}
		for _, name := range homelabWaves[wave] {
			a := byName[name]
			if a == nil {
				e.t.Fatalf("app %s (wave %d) was not generated", name, wave)
			}
			if a.Annotations["argocd.argoproj.io/sync-wave"] != fmt.Sprint(wave) {
				e.t.Errorf("app %s: sync-wave annotation %q, want %d", name, a.Annotations["argocd.argoproj.io/sync-wave"], wave)
			}
			if len(a.Status.History) == 0 || a.Status.History[0].DeployStartedAt == nil || a.Status.Health.LastTransitionTime == nil {
				e.t.Fatalf("app %s has no sync start or health time: %+v", name, a.Status)
			}
			start, ready := a.Status.History[0].DeployStartedAt.Time, a.Status.Health.LastTransitionTime.Time
			if w.firstStart.IsZero() || start.Before(w.firstStart) {
				w.firstStart = start
			}
			if ready.After(w.lastReady) {
				w.lastReady = ready
			}
		}
		out = append(out, w)
	}
	if len(apps.Items) != 9 {
		e.t.Errorf("%d Applications, want the root and 8 generated apps", len(apps.Items))
	}
	return out
}

func (e *rehearsalEnv) rootCreated() time.Time {
	e.t.Helper()
	root := &v1alpha1.Application{}
	if err := e.client().Get(e.t.Context(), client.ObjectKey{Namespace: Namespace, Name: "root"}, root); err != nil {
		e.t.Fatal(err)
	}
	return root.CreationTimestamp.Time
}

// checkSummaryOrder checks the summary table lists the apps wave by wave.
func checkSummaryOrder(t *testing.T, out string) {
	t.Helper()
	_, table, ok := strings.Cut(out, "APP  ")
	if !ok {
		t.Fatalf("no summary table in the output:\n%s", out)
	}
	var got []string
	for _, line := range strings.Split(table, "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 2 && f[0] != "root" {
			got = append(got, f[0])
		} else if len(f) == 0 {
			break
		}
	}
	var want []string
	for _, wave := range slices.Sorted(maps.Keys(homelabWaves)) {
		want = append(want, homelabWaves[wave]...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("summary lists %v, want %v", got, want)
	}
}
