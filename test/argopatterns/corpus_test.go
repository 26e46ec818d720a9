package argopatterns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/rehearsal"
	"github.com/wavecd/wavecd/internal/testenv"
)

// patternsDir holds the corpus, relative to this package.
const patternsDir = "../argo-patterns"

// TestPatterns rehearses every pattern of the corpus with `wavecd up` on a
// fresh local cluster and checks the end state its expect.yaml describes.
func TestPatterns(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(patternsDir, "*", "expect.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no pattern found in %s (%v)", patternsDir, err)
	}
	bin := testenv.LocalClusterBinary(t)
	wavecdOnPath(t)
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			exp, err := loadExpectation(dir)
			if err != nil {
				t.Fatal(err)
			}
			p := &pattern{t: t, dir: dir, exp: exp, bin: bin}
			p.rehearse()
			p.check()
			if exp.DeleteRoot {
				p.deleteRoot()
			}
		})
	}
}

// wavecdOnPath puts bin/wavecd first on PATH, for plugins whose steps run
// `wavecd render` in place of helm and kustomize.
func wavecdOnPath(t *testing.T) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := testenv.BuildWavecd(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// pattern is one rehearsal of the corpus.
type pattern struct {
	t   *testing.T
	dir string
	exp *expectation
	bin string
	ws  string
	out testenv.SyncBuffer
	rec *recorder
	c   client.Client
}

// rehearse runs up on the pattern until it settles (or, for a pattern
// meant to stall, until up gives up), syncing by hand what the pattern
// says a user syncs.
func (p *pattern) rehearse() {
	t := p.t
	p.ws = filepath.Join(t.TempDir(), rehearsal.DefaultWorkspace)
	t.Cleanup(func() {
		if err := (&rehearsal.Down{Workspace: p.ws, LocalCluster: p.bin}).Run(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	p.rec = startRecorder(ctx, filepath.Join(p.ws, "kubeconfig"), p.kinds())
	u := &rehearsal.Up{
		Out: &p.out, Workspace: p.ws, Repo: p.dir, Root: p.exp.Root, LocalCluster: p.bin,
		ExitWhenSettled: true, Timeout: 4 * time.Minute, StallAfter: p.exp.stallAfter(),
		// The controllers' logs go to the workspace, shown when the test fails.
		RouteLogs: func(w io.Writer) { slog.SetDefault(slog.New(slog.NewTextHandler(w, nil))) },
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(p.ws, "controller.log"))
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("controller log (last 40 lines):\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	if p.exp.Settings != "" {
		u.Settings = filepath.Join(p.dir, p.exp.Settings)
	}
	if p.exp.Plugins != "" {
		u.PluginsDir = filepath.Join(p.dir, p.exp.Plugins)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- u.Run(ctx) }()
	p.syncByHand(done)
	err := <-done
	t.Logf("up took %s:\n%s", time.Since(start).Round(100*time.Millisecond), p.out.String())
	var notSettled *rehearsal.NotSettledError
	switch {
	case p.exp.settles() && err != nil:
		t.Fatalf("up did not settle: %v", err)
	case !p.exp.settles() && !errors.As(err, &notSettled):
		t.Fatalf("up returned %v, want it not to settle", err)
	}
	cfg := p.rec.config(t)
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if p.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
}

// kinds are the kinds the recorder watches: Jobs and Applications, and
// every kind the pattern orders.
func (p *pattern) kinds() []string {
	kinds := []string{"Job", "Application"}
	for _, o := range p.exp.Order {
		ref, _ := parseObject(o)
		if !slices.Contains(kinds, ref.kind) {
			kinds = append(kinds, ref.kind)
		}
	}
	return kinds
}

// syncByHand waits until up says each app of SyncByHand needs a sync, then
// syncs it as `wavecd app sync` does.
func (p *pattern) syncByHand(done <-chan error) {
	for _, name := range p.exp.SyncByHand {
		hint := name + " OutOfSync and automated sync is off"
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(p.out.String(), hint) {
			select {
			case err := <-done:
				p.t.Fatalf("up ended (%v) before saying %q:\n%s", err, hint, p.out.String())
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				p.t.Fatalf("up never said %q:\n%s", hint, p.out.String())
			}
		}
		ac, err := appclient.New(p.rec.config(p.t), rehearsal.Namespace, "")
		if err != nil {
			p.t.Fatal(err)
		}
		if _, err := (&appclient.Sync{Client: ac, Name: name}).Run(p.t.Context()); err != nil {
			p.t.Fatalf("sync %s: %v", name, err)
		}
	}
}

// check compares the cluster and up's output with the expectation.
func (p *pattern) check() {
	p.checkApps()
	p.checkJobs()
	p.checkAbsent()
	p.checkOrder()
	p.checkObjects()
	for _, want := range p.exp.Output {
		if !strings.Contains(p.out.String(), want) {
			p.t.Errorf("up's output lacks %q", want)
		}
	}
}

func (p *pattern) checkApps() {
	for name, want := range p.exp.Apps {
		app := &v1alpha1.Application{}
		if err := p.c.Get(p.t.Context(), client.ObjectKey{Namespace: rehearsal.Namespace, Name: name}, app); err != nil {
			p.t.Errorf("app %s: %v", name, err)
			continue
		}
		if want.Sync != "" && string(app.Status.Sync.Status) != want.Sync {
			p.t.Errorf("app %s: sync %s, want %s", name, app.Status.Sync.Status, want.Sync)
		}
		if want.Health != "" && string(app.Status.Health.Status) != want.Health {
			p.t.Errorf("app %s: health %s, want %s", name, app.Status.Health.Status, want.Health)
		}
		if want.Message != "" && !slices.ContainsFunc(messages(app), func(m string) bool { return strings.Contains(m, want.Message) }) {
			p.t.Errorf("app %s: no operation or condition message contains %q: %q", name, want.Message, messages(app))
		}
	}
}

func messages(app *v1alpha1.Application) []string {
	var out []string
	if op := app.Status.OperationState; op != nil {
		out = append(out, op.Message)
	}
	for _, c := range app.Status.Conditions {
		out = append(out, c.Message)
	}
	return out
}

// checkJobs compares how many times each Job ran, and how many are left.
func (p *pattern) checkJobs() {
	for name, want := range p.exp.Runs {
		got := 0
		for _, ns := range p.namespaces() {
			got += p.rec.runs(objectRef{kind: "Job", namespace: ns, name: name})
		}
		if got != want {
			p.t.Errorf("Job %s ran %d times, want %d", name, got, want)
		}
	}
	if len(p.exp.Live) == 0 {
		return
	}
	jobs := &batchv1.JobList{}
	if err := p.c.List(p.t.Context(), jobs); err != nil {
		p.t.Fatal(err)
	}
	for name, want := range p.exp.Live {
		got := 0
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if matches(objectRef{kind: "Job", namespace: j.Namespace, name: name}, objectRef{kind: "Job", namespace: j.Namespace, name: j.Name}.String()) {
				got++
			}
		}
		if got != want {
			p.t.Errorf("%d Jobs %s left, want %d", got, name, want)
		}
	}
}

// namespaces are the destination namespaces of the pattern's apps.
func (p *pattern) namespaces() []string {
	apps := &v1alpha1.ApplicationList{}
	if err := p.c.List(p.t.Context(), apps); err != nil {
		p.t.Fatal(err)
	}
	var out []string
	for _, a := range apps.Items {
		if ns := a.Spec.Destination.Namespace; !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

func (p *pattern) checkAbsent() {
	disc, err := discovery.NewDiscoveryClientForConfig(p.rec.cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, s := range p.exp.Absent {
		ref, _ := parseObject(s)
		gvr, ok := resourceOf(disc, ref.kind)
		if !ok {
			p.t.Errorf("absent %s: no resource serves kind %s", s, ref.kind)
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(gvr.GroupVersion().String())
		u.SetKind(ref.kind)
		err := p.c.Get(p.t.Context(), client.ObjectKey{Namespace: ref.namespace, Name: ref.name}, u)
		if !apierrors.IsNotFound(err) {
			p.t.Errorf("%s exists (err %v), want it absent", s, err)
		}
	}
}

// checkObjects compares the fields the pattern names with the live objects.
func (p *pattern) checkObjects() {
	disc, err := discovery.NewDiscoveryClientForConfig(p.rec.cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	for _, o := range p.exp.Objects {
		gvr, ok := resourceOf(disc, o.Kind)
		if !ok {
			p.t.Errorf("%s %s/%s: no resource serves kind %s", o.Kind, o.Namespace, o.Name, o.Kind)
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(gvr.GroupVersion().String())
		u.SetKind(o.Kind)
		if err := p.c.Get(p.t.Context(), client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, u); err != nil {
			p.t.Errorf("%s %s/%s: %v", o.Kind, o.Namespace, o.Name, err)
			continue
		}
		for path, want := range o.Fields {
			got, found, err := unstructured.NestedFieldNoCopy(u.Object, fieldPath(path)...)
			if !found || err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				p.t.Errorf("%s %s/%s: %s = %v (found %v), want %v", o.Kind, o.Namespace, o.Name, path, got, found, want)
			}
		}
	}
}

// checkOrder checks that the objects were created in the order given.
func (p *pattern) checkOrder() {
	var last int64
	prev := ""
	for _, o := range p.exp.Order {
		ref, _ := parseObject(o)
		rev, ok := p.rec.revision(ref)
		if !ok {
			p.t.Errorf("order: %s was never created", o)
			continue
		}
		if rev <= last {
			p.t.Errorf("order: %s (revision %d) was created before %s (revision %d)", o, rev, prev, last)
		}
		last, prev = rev, o
	}
}

// deleteRoot runs a controller beside the settled rehearsal, as a user's
// cluster would, deletes the root app and waits until every Application
// and every object the rehearsal recorded is gone. With an operator
// stand-in, the operator must have cleared its finalizers before its own
// Deployment went.
func (p *pattern) deleteRoot() {
	t := p.t
	stop := startController(t, p.rec.cfg)
	defer stop()
	if len(trackedObjects(t, p.rec.cfg)) == 0 {
		t.Fatal("no tracked object before the root is deleted: the deletion would prove nothing")
	}
	if p.exp.Operator != nil {
		op := p.startOperator()
		defer op.CheckClearedFirst(t, p.exp.Operator.Objects)
	}
	root := &v1alpha1.Application{}
	rootName := p.rootName()
	if err := p.c.Get(t.Context(), client.ObjectKey{Namespace: rehearsal.Namespace, Name: rootName}, root); err != nil {
		t.Fatal(err)
	}
	if err := p.c.Delete(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	deadline := deleted.Add(2 * time.Minute)
	for {
		apps := &v1alpha1.ApplicationList{}
		if err := p.c.List(t.Context(), apps); err != nil {
			t.Fatal(err)
		}
		if len(apps.Items) == 0 {
			t.Logf("every Application gone %s after the root was deleted", time.Since(deleted).Round(100*time.Millisecond))
			if left := trackedObjects(t, p.rec.cfg); len(left) > 0 {
				t.Errorf("objects left once every Application was gone: %v", left)
			}
			return
		}
		if time.Now().After(deadline) {
			var left []string
			for _, a := range apps.Items {
				left = append(left, a.Name+" "+strings.Join(a.Finalizers, ","))
			}
			t.Fatalf("Applications left 2m after the root was deleted: %v", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *pattern) rootName() string {
	data, err := os.ReadFile(filepath.Join(p.dir, p.exp.Root))
	if err != nil {
		p.t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(mustJSON(p.t, data)); err != nil {
		p.t.Fatal(err)
	}
	return u.GetName()
}
