package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// scenario is one kind of fault a run suffers.
type scenario string

const (
	killController  scenario = "controller kill -9"
	restartAPI      scenario = "API server restart"
	gitDown         scenario = "Git outage"
	loseShard       scenario = "sharded replica kill -9"
	stuckAfter               = 3 * time.Minute
	syncWindow               = 6 * time.Second // about how long the app's sync takes
	afterDoneSettle          = 2 * time.Second
)

// scenarios is the rotation of runs: most runs kill a controller.
var scenarios = []scenario{killController, restartAPI, loseShard, gitDown, killController}

// shardReplicas is how many controller replicas a sharded run starts;
// the app is pinned to the first (wavecd.io/shard: "0"), which the run
// kills.
const shardReplicas = 3

// only, when set, runs every run with this scenario (-scenario).
func scenarioOf(i int) scenario {
	if *only != "" {
		return scenario(*only)
	}
	return scenarios[i%len(scenarios)]
}

// desired are the objects the app's waves define.
var desired = []client.Object{
	&corev1.ConfigMap{}, &corev1.ConfigMap{}, &corev1.ConfigMap{},
	&appsv1.Deployment{}, &appsv1.Deployment{}, &appsv1.Deployment{},
}

func desiredName(i int) string {
	if i < 3 {
		return fmt.Sprintf("config-%d", i)
	}
	return fmt.Sprintf("tier-%d", i-3)
}

// result is what one run found.
type result struct {
	scenario       scenario
	kills          int
	apiRestarts    int
	gitOutages     int
	duplicateHooks int
	lostObjects    int
	stuck          bool
	recovery       time.Duration
	detail         string
}

// run is one run of the harness: an app synced from scratch under faults.
type run struct {
	t    *testing.T
	h    *harness
	ns   string
	repo *testenv.GitRepo
	ctrl *controllerProc
	// others are a sharded run's other replicas.
	others []*controllerProc
	rng    *rand.Rand
	res    result
	uids   map[string]types.UID
	start  time.Time
}

func (h *harness) runOnce(t *testing.T, sc scenario, rng *rand.Rand) result {
	r := &run{t: t, h: h, ns: h.env.Namespace(t), rng: rng, res: result{scenario: sc}, uids: map[string]types.UID{}}
	r.repo = testenv.NewGitRepo(t, appFiles(t))
	logDir := filepath.Join(h.logDir, strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := installSettings(context.Background(), h.kube, r.ns); err != nil {
		t.Fatal(err)
	}
	r.startControllers(sc, logDir)
	r.createApp(sc == loseShard)
	r.start = time.Now()
	stopWatch := r.watchObjects()
	faultsEnd := r.strike(sc)
	doneAt, app := r.waitDone(faultsEnd)
	time.Sleep(afterDoneSettle) // a restarted controller that ran a hook again would do it now
	stopWatch()
	r.check(app)
	switch {
	case doneAt.IsZero():
		r.res.stuck = true
		r.res.detail = fmt.Sprintf("not done %s after the last fault; %s; logs in %s", stuckAfter, describe(app), logDir)
	case doneAt.After(faultsEnd):
		r.res.recovery = doneAt.Sub(faultsEnd)
	}
	return r.res
}

func appFiles(t *testing.T) map[string]string {
	files := map[string]string{}
	entries, err := os.ReadDir("testdata/app")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata/app", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["app/"+e.Name()] = string(b)
	}
	return files
}

// startControllers starts the run's controller, or for a sharded run
// its replicas (r.ctrl the first by name, which owns the app), and waits
// until they are ready.
func (r *run) startControllers(sc scenario, logDir string) {
	n := 1
	if sc == loseShard {
		n = shardReplicas
	}
	procs := make([]*controllerProc, n)
	for i := range procs {
		p := &controllerProc{bin: r.h.wavecd, kubeconfig: r.h.env.Kubeconfig, ns: r.ns, cacheDir: r.t.TempDir(),
			logPath: filepath.Join(logDir, "controller.log")}
		if sc == loseShard {
			p.logPath = filepath.Join(logDir, fmt.Sprintf("replica-%d.log", i))
			p.args = []string{"--sharding", fmt.Sprintf("--replica-id=replica-%d", i), fmt.Sprintf("--shard-replicas=%d", n),
				"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s"}
		}
		if err := p.start(); err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(p.stop)
		procs[i] = p
	}
	for _, p := range procs {
		if err := p.waitReady(60 * time.Second); err != nil {
			r.t.Fatal(err)
		}
	}
	r.ctrl, r.others = procs[0], procs[1:]
}

func (r *run) createApp(pinned bool) {
	annotations := ""
	if pinned {
		annotations = `annotations: {wavecd.io/shard: "0"}`
	}
	manifest := fmt.Sprintf(`
metadata: {name: chaos, %s}`+`
spec:
  project: default
  source: {repoURL: %s, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
`, annotations, r.repo.Dir, r.ns)
	app := &v1alpha1.Application{}
	if err := yaml.UnmarshalStrict([]byte(manifest), app); err != nil {
		r.t.Fatal(err)
	}
	app.Namespace = r.ns
	if err := r.h.kube.Create(context.Background(), app); err != nil {
		r.t.Fatal(err)
	}
}

// at sleeps until d after the run's start.
func (r *run) at(d time.Duration) {
	time.Sleep(time.Until(r.start.Add(d)))
}

// strike applies the scenario's faults at random moments of the sync and
// returns when the last one ended.
func (r *run) strike(sc scenario) time.Time {
	ctx := context.Background()
	switch sc {
	case loseShard:
		// The app's replica dies once mid-sync; another takes the app when
		// its Lease (4s) expires, and the replica restarts (as its pod
		// would) up to 3s after that, taking its pinned app back: two
		// hand-overs of a running sync.
		r.at(time.Duration(200+r.rng.IntN(int(syncWindow/time.Millisecond))) * time.Millisecond)
		r.ctrl.kill()
		r.res.kills++
		time.Sleep(time.Duration(5000+r.rng.IntN(3000)) * time.Millisecond)
		if err := r.ctrl.start(); err != nil {
			r.t.Fatal(err)
		}
	case killController:
		n := 1 + r.rng.IntN(3)
		times := make([]time.Duration, n)
		for i := range times {
			times[i] = time.Duration(200+r.rng.IntN(int(syncWindow/time.Millisecond))) * time.Millisecond
		}
		sortDurations(times)
		for _, d := range times {
			r.at(d)
			r.ctrl.kill()
			r.res.kills++
			time.Sleep(time.Duration(r.rng.IntN(500)) * time.Millisecond)
			if err := r.ctrl.start(); err != nil {
				r.t.Fatal(err)
			}
		}
	case restartAPI:
		r.at(time.Duration(500+r.rng.IntN(4500)) * time.Millisecond)
		api := apiServer{env: r.h.env}
		if err := api.stop(ctx); err != nil {
			r.t.Fatal(err)
		}
		time.Sleep(2*time.Second + time.Duration(r.rng.Int64N(int64(max(*apiDown-2*time.Second, time.Millisecond)))))
		if err := api.start(ctx); err != nil {
			r.t.Fatal(err)
		}
		r.res.apiRestarts++
	case gitDown:
		r.at(time.Duration(r.rng.IntN(3000)) * time.Millisecond)
		g := gitOutage{dir: r.repo.Dir}
		if err := g.stop(); err != nil {
			r.t.Fatal(err)
		}
		time.Sleep(time.Duration(3000+r.rng.IntN(7000)) * time.Millisecond)
		if err := g.start(); err != nil {
			r.t.Fatal(err)
		}
		r.res.gitOutages++
	}
	return time.Now()
}

func sortDurations(ds []time.Duration) {
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

// waitDone waits until the app's sync succeeded at the repository's head
// and the app is Synced and Healthy; a zero time means it never was.
func (r *run) waitDone(faultsEnd time.Time) (time.Time, *v1alpha1.Application) {
	head := r.repo.Git("rev-parse", "HEAD")
	var app *v1alpha1.Application
	for time.Since(faultsEnd) < stuckAfter {
		a := &v1alpha1.Application{}
		err := r.h.kube.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: "chaos"}, a)
		if err == nil {
			app = a
			if done(a, head) {
				return time.Now(), a
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, app
}

func done(a *v1alpha1.Application, head string) bool {
	op := a.Status.OperationState
	return a.Operation == nil && op != nil && op.Phase == v1alpha1.OperationSucceeded &&
		op.SyncResult != nil && op.SyncResult.Revision == head &&
		a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == "Healthy"
}

func describe(a *v1alpha1.Application) string {
	if a == nil {
		return "app not found"
	}
	s := fmt.Sprintf("sync=%s health=%s", a.Status.Sync.Status, a.Status.Health.Status)
	if op := a.Status.OperationState; op != nil {
		s += fmt.Sprintf(" op=%s %q retries=%d", op.Phase, op.Message, op.RetryCount)
	}
	for _, c := range a.Status.Conditions {
		s += fmt.Sprintf(" condition %s: %s", c.Type, c.Message)
	}
	return s
}

// watchObjects records the UID each desired object is first seen with,
// polling until the returned function is called.
func (r *run) watchObjects() (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			r.recordUIDs()
			select {
			case <-quit:
				return
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	return func() { close(quit); <-finished }
}

func (r *run) recordUIDs() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for i, proto := range desired {
		obj := proto.DeepCopyObject().(client.Object)
		if err := r.h.kube.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: desiredName(i)}, obj); err != nil {
			continue
		}
		if _, seen := r.uids[desiredName(i)]; !seen {
			r.uids[desiredName(i)] = obj.GetUID()
		}
	}
}

// check counts lost objects (missing at the end, or deleted and created
// again during the run) and duplicate hooks (runs beyond one per sync
// attempt: a retried sync runs its hooks again, as in Argo CD).
func (r *run) check(app *v1alpha1.Application) {
	ctx := context.Background()
	var notes []string
	for i, proto := range desired {
		name := desiredName(i)
		obj := proto.DeepCopyObject().(client.Object)
		err := r.h.kube.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, obj)
		switch {
		case err != nil:
			r.res.lostObjects++
			notes = append(notes, name+" missing")
		case r.uids[name] != "" && r.uids[name] != obj.GetUID():
			r.res.lostObjects++
			notes = append(notes, name+" deleted and created again")
		}
	}
	attempts := 1
	if app != nil && app.Status.OperationState != nil {
		attempts += int(app.Status.OperationState.RetryCount)
	}
	for _, hook := range []string{"presync", "postsync"} {
		jobs := &batchv1.JobList{}
		if err := r.h.kube.List(ctx, jobs, client.InNamespace(r.ns), client.MatchingLabels{"app.kubernetes.io/component": hook}); err != nil {
			r.t.Fatal(err)
		}
		if extra := len(jobs.Items) - attempts; extra > 0 {
			r.res.duplicateHooks += extra
			notes = append(notes, fmt.Sprintf("%d %s jobs for %d attempt(s)", len(jobs.Items), hook, attempts))
		}
	}
	if len(notes) > 0 {
		r.res.detail = strings.Join(notes, "; ")
	}
}
