package appstatus

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const refresh = "argocd.argoproj.io/refresh"

// TestFlush writes pending patches to a real API server: a flush writes
// once what changed, nothing when nothing did or when a quiet comparison
// moved only recent timestamps, and a refresh asked for again while the
// answer to the first was pending keeps its annotation.
func TestFlush(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	c := env.AppClient(t)
	ns := env.Namespace(t)
	now := time.Now()
	ago := func(d time.Duration) *metav1.Time { m := metav1.NewTime(now.Add(-d).Truncate(time.Second)); return &m }
	tests := map[string]struct {
		annotation string
		reconciled *metav1.Time
		// change is the reconcile's change; meanwhile, another writer's.
		change, meanwhile func(*v1alpha1.Application)
		quiet             bool
		writes            int
		wantAnnotation    string
		wantHealth        v1alpha1.HealthStatusCode
	}{
		"nothing changed": {change: func(*v1alpha1.Application) {}, writes: 0},
		"a change is one write": {
			change: func(a *v1alpha1.Application) { a.Status.Health.Status = "Degraded" },
			writes: 1, wantHealth: "Degraded",
		},
		"a quiet refresh of recent timestamps is not written": {
			reconciled: ago(time.Minute), quiet: true,
			change: func(a *v1alpha1.Application) { a.Status.ReconciledAt = ago(0) },
			writes: 0,
		},
		"a quiet refresh of old timestamps is written": {
			reconciled: ago(time.Hour), quiet: true,
			change: func(a *v1alpha1.Application) { a.Status.ReconciledAt = ago(0) },
			writes: 1,
		},
		"a quiet refresh that found a change is written": {
			reconciled: ago(time.Minute), quiet: true,
			change: func(a *v1alpha1.Application) {
				a.Status.ReconciledAt, a.Status.Health.Status = ago(0), "Degraded"
			},
			writes: 1, wantHealth: "Degraded",
		},
		"a time as the API server keeps it (to the second) is not written": {
			reconciled: ago(time.Minute),
			change: func(a *v1alpha1.Application) {
				later := metav1.NewTime(a.Status.ReconciledAt.Add(300 * time.Millisecond))
				a.Status.ReconciledAt = &later
			},
			writes: 0,
		},
		"an empty list in place of none is not written": {
			change: func(a *v1alpha1.Application) { a.Status.Conditions = []v1alpha1.ApplicationCondition{} },
			writes: 0,
		},
		"a refresh request answered": {
			annotation: "normal",
			change:     func(a *v1alpha1.Application) { delete(a.Annotations, refresh) },
			writes:     1,
		},
		"a refresh asked for again meanwhile is kept": {
			annotation: "normal",
			change: func(a *v1alpha1.Application) {
				delete(a.Annotations, refresh)
				a.Status.Health.Status = "Degraded"
			},
			meanwhile:      func(a *v1alpha1.Application) { a.Annotations[refresh] = "hard" },
			writes:         1,
			wantAnnotation: "hard", wantHealth: "Degraded",
		},
		"another change meanwhile does not keep an answered request": {
			annotation: "normal",
			change:     func(a *v1alpha1.Application) { delete(a.Annotations, refresh) },
			meanwhile:  func(a *v1alpha1.Application) { a.Labels = map[string]string{"team": "web"} },
			writes:     1,
		},
	}
	i := 0
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			i++
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-" + string(rune('a'+i))},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Namespace: ns}}}
			if tc.annotation != "" {
				app.Annotations = map[string]string{refresh: tc.annotation}
			}
			// The Application CRD has no status subresource: the status is
			// created with the app, as Argo CD's is.
			app.Status.Health.Status, app.Status.ReconciledAt = "Healthy", tc.reconciled
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			writes := 0
			w := NewWriter(c, c, func(_, _ *v1alpha1.Application) { writes++ })
			read := &v1alpha1.Application{}
			if current, err := w.ReadCurrent(ctx, client.ObjectKeyFromObject(app), read); err != nil || !current {
				t.Fatalf("read: current %v, %v", current, err)
			}
			asRead := read.DeepCopy()
			p := w.Begin(read)
			if tc.quiet {
				p.Quiet(10*time.Minute, time.Now)
			}
			tc.change(p.App())
			if tc.meanwhile != nil {
				other := &v1alpha1.Application{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(app), other); err != nil {
					t.Fatal(err)
				}
				tc.meanwhile(other)
				if err := c.Update(ctx, other); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// The app as read is the cache's own copy: the patch changes a
			// copy of it.
			if diff := cmp.Diff(asRead, read); diff != "" {
				t.Errorf("the change and the flush changed the app as read (-before +after):\n%s", diff)
			}
			got := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			wantHealth := tc.wantHealth
			if wantHealth == "" {
				wantHealth = "Healthy"
			}
			if diff := cmp.Diff(
				map[string]any{"writes": tc.writes, "annotation": tc.wantAnnotation, "health": wantHealth},
				map[string]any{"writes": writes, "annotation": got.Annotations[refresh], "health": got.Status.Health.Status},
			); diff != "" {
				t.Errorf("after the flush (-want +got):\n%s", diff)
			}
			if tc.writes == 0 {
				return
			}
			// The flushed app is what was written, with the API server's
			// metadata: another writer's label, the new resourceVersion.
			mine := p.App()
			if diff := cmp.Diff(
				map[string]any{"rv": got.ResourceVersion, "labels": got.Labels, "annotations": got.Annotations, "health": got.Status.Health.Status, "managedFields": 0},
				map[string]any{"rv": mine.ResourceVersion, "labels": mine.Labels, "annotations": mine.Annotations, "health": mine.Status.Health.Status, "managedFields": len(mine.ManagedFields)},
			); diff != "" {
				t.Errorf("the flushed app and the API server's (-server +flushed):\n%s", diff)
			}
		})
	}
}

// TestFlushLargeStatus writes the status of a root app of 12,000
// children, which as listed would be above etcd's limit: the write lands,
// within the budget, with the StatusTruncatedWarning condition; and a
// status the API server refuses for its messages is written with them cut.
func TestFlushLargeStatus(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	c := env.AppClient(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	tests := map[string]struct {
		change        func(*v1alpha1.Application)
		wantCondition string
		wantCut       bool
	}{
		"12,000 children": {
			change: func(a *v1alpha1.Application) {
				big := bigApp(12000, true)
				a.Status.Resources, a.Status.OperationState = big.Status.Resources, big.Status.OperationState
			},
			wantCondition: "status lists ",
		},
		"a message of 2 MiB": {
			change: func(a *v1alpha1.Application) {
				a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: "SyncError", Message: strings.Repeat("x", 2<<20)}}
			},
			wantCut: true,
		},
	}
	i := 0
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			i++
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("root-%d", i)},
				Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Namespace: ns}}}
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			w := NewWriter(c, c, nil)
			p := w.Begin(app)
			tc.change(p.App())
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			if size := jsonSize(got); size > StatusBudget+64<<10 {
				t.Errorf("the written app takes %d bytes", size)
			}
			if cond := condition(got); !strings.HasPrefix(cond, tc.wantCondition) || (cond == "") != (tc.wantCondition == "") {
				t.Errorf("StatusTruncatedWarning %q, want one starting %q", cond, tc.wantCondition)
			}
			if tc.wantCondition != "" && len(got.Status.Resources) < 1000 {
				t.Errorf("only %d resources listed", len(got.Status.Resources))
			}
			if tc.wantCut {
				if m := got.Status.Conditions[0].Message; len(m) > messageMax || !strings.HasSuffix(m, "(cut)") {
					t.Errorf("the long message was written as %d bytes", len(m))
				}
			}
		})
	}
}

// staleCache is a cache that has not caught up: it serves one copy.
type staleCache struct {
	client.Client
	copy *v1alpha1.Application
}

func (s staleCache) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s.copy.DeepCopyInto(obj.(*v1alpha1.Application))
	return nil
}

// countingReader counts reads of the API server.
type countingReader struct {
	client.Reader
	n *int
}

func (c countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*c.n++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestUpdateFrom: a writer holding the app as it last wrote it writes
// over that copy while the cache lags, and reads the API server only
// when neither the cache nor its copy includes the controller's last
// write; ReadCurrent never reads the API server for a stale cached copy.
func TestUpdateFrom(t *testing.T) {
	env := testenv.Get(t)
	env.InstallCRDs(t)
	c := env.AppClient(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Namespace: ns}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	reads := 0
	w := NewWriter(staleCache{Client: c, copy: app.DeepCopy()}, countingReader{Reader: c, n: &reads}, nil)
	health := func(h v1alpha1.HealthStatusCode) func(*v1alpha1.Application) {
		return func(a *v1alpha1.Application) { a.Status.Health.Status = h }
	}
	first, err := w.UpdateFrom(ctx, key, app, health("Progressing"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.UpdateFrom(ctx, key, first, health("Healthy"))
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 {
		t.Fatalf("%d reads of the API server with the last write at hand", reads)
	}
	if first.Status.Health.Status != "Progressing" {
		t.Errorf("UpdateFrom modified the copy it started from")
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Health.Status != "Healthy" || got.ResourceVersion != second.ResourceVersion {
		t.Errorf("written: health %s at %s; want Healthy at %s", got.Status.Health.Status, got.ResourceVersion, second.ResourceVersion)
	}
	if _, err := w.UpdateFrom(ctx, key, first, health("Degraded")); err != nil || reads != 1 {
		t.Errorf("an older copy than the last write: %d reads (%v), want 1", reads, err)
	}
	if current, err := w.ReadCurrent(ctx, key, &v1alpha1.Application{}); err != nil || current || reads != 1 {
		t.Errorf("ReadCurrent of a stale cache: current %v, %d reads (%v); want false, 1", current, reads, err)
	}
}
