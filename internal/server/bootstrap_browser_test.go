package server_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/rehearsal"
	"github.com/wavecd/wavecd/internal/testenv"
)

// upRun is `wavecd up` in process on a repository of this tree, serving
// the web UI, until the test ends.
type upRun struct {
	base, password string
	kube           client.Client
	out            *lockedBuffer
}

// startUp rehearses repo (relative to the repository root) with the
// settings file settings ("" for none) on a fresh local cluster, and
// returns once the web UI serves.
func startUp(t *testing.T, repo, settings string) *upRun {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	ws := filepath.Join(t.TempDir(), ".wavecd")
	r := &upRun{out: &lockedBuffer{}}
	u := &rehearsal.Up{Out: r.out, Workspace: ws, Repo: filepath.Join(root, repo), UI: "127.0.0.1:0", Fresh: true}
	if settings != "" {
		u.Settings = filepath.Join(root, settings)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var ended error // set when the wait below saw Run end
	go func() { done <- u.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if ended == nil {
			ended = <-done
		}
		if err := ended; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("wavecd up: %v", err)
		}
		if err := (&rehearsal.Down{Workspace: ws}).Run(context.Background()); err != nil {
			t.Errorf("wavecd down: %v", err)
		}
		if t.Failed() {
			t.Logf("wavecd up printed:\n%s", r.out.String())
		}
	})
	line := regexp.MustCompile(`web UI (http://\S+) \(user admin, password (\S+)\)`)
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if m := line.FindStringSubmatch(r.out.String()); m != nil {
			r.base, r.password = m[1], m[2]
			break
		}
		select {
		case err := <-done:
			ended = fmt.Errorf("ended before serving the UI: %w", cmp.Or(err, errors.New("without an error")))
			t.Fatalf("wavecd up %v\n%s", ended, r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("wavecd up serves no UI after 3m:\n%s", r.out.String())
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(ws, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if r.kube, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitApps waits until the rehearsal's Applications meet cond.
func (r *upRun) waitApps(t *testing.T, timeout time.Duration, what string, cond func(map[string]*v1alpha1.Application) bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(250 * time.Millisecond) {
		list := &v1alpha1.ApplicationList{}
		err := r.kube.List(t.Context(), list, client.InNamespace(rehearsal.Namespace))
		apps := map[string]*v1alpha1.Application{}
		for i := range list.Items {
			apps[list.Items[i].Name] = &list.Items[i]
		}
		if err == nil && cond(apps) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("apps not %s within %s (err %v):\n%s", what, timeout, err, tail(r.out.String(), 40))
		}
	}
}

// login signs the browser in and makes the window wide enough for a
// seven-wave graph.
func (r *upRun) login(b *browserSteps) {
	b.run("login", time.Minute,
		chromedp.EmulateViewport(1900, 1200),
		chromedp.Navigate(r.base+"/login"),
		chromedp.SendKeys(chromedp.CSS("#username"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#password"), r.password),
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(".tiles")),
	)
}

func allSettled(names ...string) func(map[string]*v1alpha1.Application) bool {
	return func(apps map[string]*v1alpha1.Application) bool {
		for _, n := range names {
			a := apps[n]
			if a == nil || a.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || a.Status.Health.Status != "Healthy" || a.Operation != nil {
				return false
			}
		}
		return true
	}
}

// graphNode is one node of the app-of-apps graph as the browser shows it.
type graphNode struct {
	Name   string `json:"name"`
	Column string `json:"column"`
	Class  string `json:"class"`
	Stripe string `json:"stripe"`
	Text   string `json:"text"`
	Label  string `json:"label"`
}

const graphNodesJS = `(() => {
  const svg = document.querySelector("#app-graph svg");
  if (!svg) return [];
  const heads = Array.from(svg.querySelectorAll("text.colhead")).map(t => t.textContent);
  return Array.from(svg.querySelectorAll("[data-node]")).map(n => ({
    name: n.dataset.node, column: heads[Number(n.dataset.col)], class: n.getAttribute("class"),
    stripe: getComputedStyle(n.querySelector(".node-stripe")).fill,
    text: Array.from(n.querySelectorAll("text")).map(t => t.textContent).join(" "),
    label: n.getAttribute("aria-label")}));
})()`

// timelineRow is one row of the sync timeline: its bars' extent in x.
type timelineRow struct {
	Row      string   `json:"row"`
	Y        float64  `json:"y"`
	Start    float64  `json:"start"`
	End      float64  `json:"end"`
	Phases   []string `json:"phases"`
	Critical bool     `json:"critical"`
}

const timelineRowsJS = `(() => Array.from(document.querySelectorAll("#sync-timeline-box g.row")).map(g => {
  const bars = Array.from(g.querySelectorAll("rect.bar")).filter(r => !r.classList.contains("never"));
  const xs = bars.map(r => +r.getAttribute("x")), ends = bars.map(r => +r.getAttribute("x") + +r.getAttribute("width"));
  return {row: g.dataset.row, y: +g.querySelector("text").getAttribute("y"), start: xs.length ? Math.min(...xs) : -1,
    end: ends.length ? Math.max(...ends) : -1, phases: bars.map(r => r.dataset.phase), critical: g.classList.contains("critical")};
}))()`

func evaluate[T any](b *browserSteps, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate: %v", err)
	}
	return v
}

// textOf is the text of the element sel, shown or not ("" when absent).
func textOf(b *browserSteps, sel string) string {
	b.t.Helper()
	return evaluate[string](b, `(document.querySelector(`+strconv.Quote(sel)+`) || {textContent: ""}).textContent`)
}

// shoot saves a screenshot of the element sel as name.png, with the page
// as wide as the window so that a wide picture shows whole.
func (b *browserSteps) shoot(name, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".page").style.maxWidth = "none"`)); err != nil {
		b.t.Fatal(err)
	}
	var png []byte
	var err error
	for range 3 { // a live update may replace the element between finding and shooting it
		if png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel))); err == nil {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", sel, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// healthyGreen is the graph's stripe of a Healthy app (#18be94).
const healthyGreen = "rgb(24, 190, 148)"

// checkColumns checks each app's node sits in the column of its wave, in
// Healthy's colour, and that nothing else is drawn.
func checkColumns(t *testing.T, nodes []graphNode, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, n := range nodes {
		got[n.Name] = n.Column
		if !strings.Contains(n.Class, "h-Healthy") || n.Stripe != healthyGreen {
			t.Errorf("node %s: class %q, stripe %s; want Healthy in %s", n.Name, n.Class, n.Stripe, healthyGreen)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("apps by column %v, want %v", got, want)
	}
}

// checkWaveOrder checks the timeline lists rows in order and that each
// wave's bars start once the previous wave's bars ended: the bars are
// ordered as the waves ran.
func checkWaveOrder(t *testing.T, rows []timelineRow, order []string, waves [][]string) {
	t.Helper()
	byName := map[string]timelineRow{}
	var listed []string
	for _, r := range rows {
		byName[r.Row] = r
		listed = append(listed, r.Row)
	}
	if !slices.Equal(listed, order) {
		t.Errorf("timeline rows %v, want %v", listed, order)
	}
	for i := 1; i < len(waves); i++ {
		prevEnd := 0.0
		for _, n := range waves[i-1] {
			prevEnd = max(prevEnd, byName[n].End)
		}
		for _, n := range waves[i] {
			if r := byName[n]; r.Start < 0 || r.Start+0.5 < prevEnd {
				t.Errorf("%s's bar starts at x=%g, before the wave before it ended (x=%g): %+v", n, r.Start, prevEnd, rows)
			}
		}
	}
}

// TestBrowserHealthCheckBootstrap rehearses examples/healthcheck-poc
// with `wavecd up` and watches it in the web UI: the root's page, opened
// while app-a's Redis starts, follows the bootstrap live until app-a
// (wave 0) and app-b (wave 1) are Healthy in their columns; the timeline
// draws app-b's sync after app-a turned Healthy; the arrow keys walk the
// graph and Enter opens an app; app-a's resources draw as a graph.
func TestBrowserHealthCheckBootstrap(t *testing.T) {
	browser := newBrowser(t)
	up := startUp(t, "examples/healthcheck-poc", "")
	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "ui")}
	up.login(b)
	up.waitApps(t, 2*time.Minute, "with a root", func(apps map[string]*v1alpha1.Application) bool { return apps["root"] != nil })
	b.run("healthcheck-root-early", 30*time.Second,
		chromedp.Navigate(up.base+"/applications/root"), chromedp.WaitVisible(chromedp.CSS("#app-name")))
	for _, n := range evaluate[[]graphNode](b, graphNodesJS) {
		if n.Name == "app-b" && strings.Contains(n.Class, "h-Healthy") {
			t.Fatalf("app-b was Healthy when the page opened: the live update is not tested (%+v)", n)
		}
	}
	b.run("healthcheck-root-live", 3*time.Minute,
		chromedp.WaitVisible(chromedp.CSS(`#app-graph [data-node="app-a"].h-Healthy`)),
		chromedp.WaitVisible(chromedp.CSS(`#app-graph [data-node="app-b"].h-Healthy`)),
	)
	up.waitApps(t, time.Minute, "settled", allSettled("root", "app-a", "app-b"))
	b.run("healthcheck-root-settled", time.Minute, chromedp.Navigate(up.base+"/applications/root"),
		chromedp.WaitVisible(chromedp.CSS(`#app-graph [data-node="app-b"].h-Healthy`)), chromedp.WaitVisible(chromedp.CSS("#sync-timeline-box svg")))
	checkColumns(t, evaluate[[]graphNode](b, graphNodesJS), map[string]string{"root": "root", "app-a": "wave 0", "app-b": "wave 1"})
	rows := evaluate[[]timelineRow](b, timelineRowsJS)
	checkWaveOrder(t, rows, []string{"root", "app-a", "app-b"}, [][]string{{"app-a"}, {"app-b"}})
	for _, r := range rows {
		if !r.Critical {
			t.Errorf("row %s is not on the critical path: root starts app-a, app-b waits for it", r.Row)
		}
	}
	b.shoot("healthcheck-graph", "#app-graph-panel")
	b.shoot("healthcheck-timeline", "#timeline-panel")

	// Focus from script: a live update may replace the nodes meanwhile,
	// and keeps the focused one focused.
	b.run("keyboard", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#app-graph [data-node="root"]').focus()`), chromedp.KeyEvent(kb.ArrowRight))
	if got := evaluate[string](b, `document.activeElement.dataset.node || ""`); got != "app-a" {
		t.Errorf("ArrowRight from root focused %q, want app-a", got)
	}
	b.run("keyboard-open", 30*time.Second, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`body[data-app="app-b"]`)))

	b.run("app-a-resource-graph", time.Minute,
		chromedp.Navigate(up.base+"/applications/app-a"), chromedp.Click(chromedp.CSS("#view-graph")),
		chromedp.WaitVisible(chromedp.CSS(`#resource-graph .edge.routes`)))
	text := evaluate[string](b, `Array.from(document.querySelectorAll("#resource-graph svg text")).map(t => t.textContent).join(" | ")`)
	for _, want := range []string{"sts redis", "pod redis-0", "svc redis", "es redis-"} {
		if !strings.Contains(text, want) {
			t.Errorf("the resource graph lacks %q: %s", want, text)
		}
	}
	b.shoot("resource-graph", "#resource-graph svg")
}

// homelabColumns are examples/homelab-waves' apps by wave column.
var homelabColumns = map[string]string{
	"root": "root", "networking": "wave 0", "secrets": "wave 0", "storage": "wave 1", "backup-checker": "wave 2",
	"cert-manager": "wave 4", "kube-prometheus": "wave 5", "home-assistant": "wave 6", "jellyfin": "wave 6",
}

// TestBrowserHomelabBootstrap rehearses examples/homelab-waves: a root,
// three ApplicationSets and eight apps in waves 0 to 6 ordered by
// wavecd.io/depends-on. The graph puts each app in its wave's column,
// Healthy; the timeline's bars follow the waves.
func TestBrowserHomelabBootstrap(t *testing.T) {
	browser := newBrowser(t)
	up := startUp(t, "examples/homelab-waves", "")
	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "ui")}
	up.login(b)
	var names []string
	for n := range homelabColumns {
		names = append(names, n)
	}
	up.waitApps(t, 4*time.Minute, "settled", allSettled(names...))
	b.run("homelab-root", time.Minute, chromedp.Navigate(up.base+"/applications/root"),
		chromedp.WaitVisible(chromedp.CSS(`#app-graph [data-node="jellyfin"].h-Healthy`)), chromedp.WaitVisible(chromedp.CSS("#sync-timeline-box svg")))
	checkColumns(t, evaluate[[]graphNode](b, graphNodesJS), homelabColumns)
	waves := [][]string{{"networking", "secrets"}, {"storage"}, {"backup-checker"}, {"cert-manager"}, {"kube-prometheus"}, {"home-assistant", "jellyfin"}}
	order := []string{"root"}
	for _, w := range waves {
		order = append(order, w...)
	}
	checkWaveOrder(t, evaluate[[]timelineRow](b, timelineRowsJS), order, waves)
	if got := textOf(b, `#app-graph-table tr[data-app="storage"]`); !strings.Contains(got, "ApplicationSet infrastructure") || !strings.Contains(got, "networking, secrets") {
		t.Errorf("the table's row of storage %q does not name its set and dependencies", got)
	}
	b.shoot("homelab-graph", "#app-graph-panel")
	b.shoot("homelab-timeline", "#timeline-panel")
}

// TestBrowserStalledBootstrap rehearses testdata/stalled-bootstrap, whose
// wave 0 app asks for more CPU than any node has, with a 5s stall
// timeout: the root's sync stalls on cache, and the root's graph shows
// cache, the blocked node, with the wave it holds and the scheduler's
// reason, in its table row and its timeline bar too.
func TestBrowserStalledBootstrap(t *testing.T) {
	browser := newBrowser(t)
	up := startUp(t, "internal/server/testdata/stalled-bootstrap", "internal/server/testdata/stalled-bootstrap/settings.yaml")
	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "ui")}
	up.login(b)
	up.waitApps(t, 3*time.Minute, "with the root stalled", func(apps map[string]*v1alpha1.Application) bool {
		a := apps["root"]
		return a != nil && slices.ContainsFunc(a.Status.Conditions, func(c v1alpha1.ApplicationCondition) bool {
			return c.Type == v1alpha1.ApplicationConditionSyncStalled
		})
	})
	b.run("stalled-root", time.Minute, chromedp.Navigate(up.base+"/applications/root"),
		chromedp.WaitVisible(chromedp.CSS(`#app-graph [data-node="cache"].stalled`)),
		chromedp.WaitVisible(chromedp.CSS(`#sync-timeline-box g[data-row="cache"] rect.bar.stalled`)))
	var cache graphNode
	for _, n := range evaluate[[]graphNode](b, graphNodesJS) {
		switch n.Name {
		case "cache":
			cache = n
		case "root":
			if !strings.Contains(n.Class, "stalled") {
				t.Errorf("the root, whose sync stalled, does not stand out: %+v", n)
			}
		}
	}
	for _, want := range []string{"stalled", "holds wave 0 of root", "Deployment cache/cache", "Pending"} {
		if !strings.Contains(cache.Text, want) {
			t.Errorf("the stalled node shows %q, want %q in it", cache.Text, want)
		}
	}
	if !strings.Contains(cache.Label, "Insufficient cpu") || cache.Stripe == healthyGreen {
		t.Errorf("the stalled node's label %q lacks the scheduler's reason, or its stripe is %s", cache.Label, cache.Stripe)
	}
	if got := textOf(b, `#app-graph-table tr.stalled[data-app="cache"]`); !strings.Contains(got, "Insufficient cpu") {
		t.Errorf("the table's row of cache %q does not give the stall's reason", got)
	}
	if web := evaluate[[]graphNode](b, graphNodesJS); slices.ContainsFunc(web, func(n graphNode) bool { return n.Name == "web" }) {
		t.Errorf("web (wave 1) exists although wave 0 never came up: %+v", web)
	}
	b.shoot("stalled-graph", "#app-graph-panel")
	b.shoot("stalled-timeline", "#timeline-panel")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
