package render

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
	"github.com/wavecd/wavecd/internal/testenv/folder"
)

// bigChartRepo commits a chart with n templates to a new Git repository.
func bigChartRepo(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{
		"big/Chart.yaml":  "apiVersion: v2\nname: big\nversion: 1.0.0\n",
		"big/values.yaml": "replicas: 2\nimage: nginx:1.27\n",
	}
	for i := range n {
		files[fmt.Sprintf("big/templates/t%02d.yaml", i)] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-%02d
  labels: {app: {{ .Release.Name }}, index: "%d"}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}-%02d}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}-%02d}}
    spec:
      containers:
        - name: c
          image: {{ .Values.image | quote }}
          env:
            {{- range $k, $v := .Values }}
            - {name: {{ $k | upper }}, value: {{ $v | toString | quote }}}
            {{- end }}
`, i, i, i, i)
	}
	folder.Write(tb, dir, files)
	commitAll(tb, dir)
	return dir
}

// commitAll makes dir a Git repository on branch main with one commit of
// every file in it.
func commitAll(tb testing.TB, dir string) {
	tb.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "chart"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func bigChartApp(repo string) *v1alpha1.Application {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: "big", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Namespace: "bench"},
	}}
	app.Name = "bench"
	return app
}

func TestRenderCache(t *testing.T) {
	repo := bigChartRepo(t, 3)
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{})})
	caps := Capabilities{KubeVersion: testKubeVersion}
	first, err := engine.RenderApp(t.Context(), bigChartApp(repo), caps)
	if err != nil {
		t.Fatal(err)
	}
	second, err := engine.RenderApp(t.Context(), bigChartApp(repo), caps)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.Objects, second.Objects); diff != "" {
		t.Errorf("a hit differs from the render it cached (-render +hit):\n%s", diff)
	}
	first.Objects[0].SetName("changed by the caller")
	second.Objects[0].SetName("changed by the caller")
	third, err := engine.RenderApp(t.Context(), bigChartApp(repo), caps)
	if err != nil {
		t.Fatal(err)
	}
	if got := third.Objects[0].GetName(); got != "bench-00" {
		t.Errorf("a caller's change leaked into the cache: name = %q", got)
	}
	if engine.cache.Len() != 1 {
		t.Errorf("cache entries = %d, want 1", engine.cache.Len())
	}
	if diff := cmp.Diff([]string{second.Revisions[0]}, first.Revisions); diff != "" {
		t.Errorf("revisions (-want +got):\n%s", diff)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(CacheLimits{Entries: 2})
	c.Put("a", "", &Result{Warnings: []string{"a"}})
	c.Put("b", "", &Result{Warnings: []string{"b"}})
	c.Get("a", "")
	c.Put("c", "", &Result{Warnings: []string{"c"}})
	_, hasA := c.Get("a", "")
	_, hasB := c.Get("b", "")
	_, hasC := c.Get("c", "")
	if diff := cmp.Diff([]bool{true, false, true}, []bool{hasA, hasB, hasC}); diff != "" {
		t.Errorf("present a, b, c (-want +got):\n%s", diff)
	}
}

// BenchmarkCacheFootprint stores the one-ConfigMap render of each of
// 1,000 apps and reports the heap the cache holds per entry (B/entry),
// and the time of a hit.
func BenchmarkCacheFootprint(b *testing.B) {
	result := func(i int) *Result {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%04d", i), "namespace": "apps",
				"labels": map[string]any{"app.kubernetes.io/name": fmt.Sprintf("app-%04d", i)}},
			"data": map[string]any{"key": strings.Repeat("v", 64), "replicas": int64(3)},
		}}
		return &Result{Objects: []*unstructured.Unstructured{cm}, Revisions: []string{strings.Repeat("a", 40)}, Types: []SourceType{TypeDirectory}, Size: 300}
	}
	const n = 1000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := NewCache(CacheLimits{Entries: DefaultCacheEntries, Bytes: DefaultCacheBytes})
	for i := range n {
		c.Put(fmt.Sprintf("key-%d", i), "", result(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for i := range b.N {
		if _, ok := c.Get(fmt.Sprintf("key-%d", i%n), ""); !ok {
			b.Fatal("miss")
		}
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "B/entry")
	runtime.KeepAlive(c)
}

// TestCacheBoundedByBytes: results are evicted, least recently used
// first, once the bytes they were rendered from exceed the bound; a
// result bigger than the bound alone is kept until the next one comes,
// and a result stored again under its key is counted once.
func TestCacheBoundedByBytes(t *testing.T) {
	c := NewCache(CacheLimits{Entries: 100, Bytes: 1000})
	present := func(keys ...string) []bool { // without touching the order
		var out []bool
		for _, k := range keys {
			_, ok := c.items[k]
			out = append(out, ok)
		}
		return out
	}
	for _, step := range []struct {
		put  string
		size int64
		want []bool // a, b, c, d
	}{
		{put: "a", size: 400, want: []bool{true, false, false, false}},
		{put: "b", size: 400, want: []bool{true, true, false, false}},
		{put: "a", size: 500, want: []bool{true, true, false, false}}, // 900 bytes
		{put: "c", size: 200, want: []bool{true, false, true, false}}, // b least recently used
		{put: "d", size: 5000, want: []bool{false, false, false, true}},
		{put: "a", size: 10, want: []bool{true, false, false, false}},
	} {
		c.Put(step.put, "", &Result{Size: step.size})
		if diff := cmp.Diff(step.want, present("a", "b", "c", "d")); diff != "" {
			t.Fatalf("after %s (%d bytes): present a, b, c, d (-want +got):\n%s", step.put, step.size, diff)
		}
	}
}

// BenchmarkRender50Templates renders an app whose chart has 50 templates:
// cold (no render cache; repository tree already read) and warm (cache hit).
func BenchmarkRender50Templates(b *testing.B) {
	repo := bigChartRepo(b, 50)
	repos := source.NewRepos(source.ReposOptions{})
	caps := Capabilities{KubeVersion: testKubeVersion}
	app := bigChartApp(repo)
	b.Run("cold", func(b *testing.B) {
		engine := NewEngine(EngineOptions{Repos: repos, CacheSize: -1})
		for b.Loop() {
			if _, err := engine.RenderApp(b.Context(), app, caps); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		engine := NewEngine(EngineOptions{Repos: repos})
		if _, err := engine.RenderApp(b.Context(), app, caps); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := engine.RenderApp(b.Context(), app, caps); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm-source-only", func(b *testing.B) {
		engine := NewEngine(EngineOptions{Repos: repos})
		tree, err := repos.Checkout(b.Context(), repo, "main")
		if err != nil {
			b.Fatal(err)
		}
		req := &Request{AppName: "bench", Namespace: "bench", Source: *app.Spec.Source, Tree: tree, Capabilities: caps}
		if _, err := engine.Render(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := engine.Render(b.Context(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRenderCacheFollowsCapabilities: a chart renders again for other
// capabilities (a CRD installed since adds an API version it may test
// for), then hits for those; a directory renders the same for any.
func TestRenderCacheFollowsCapabilities(t *testing.T) {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{
		"stamp/Chart.yaml":        "apiVersion: v2\nname: stamp\nversion: 1.0.0\n",
		"stamp/templates/cm.yaml": stampTemplate,
		"plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
	})
	commitAll(t, dir)
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{})})
	before := NewCapabilities(testKubeVersion, []string{"v1", "v1/ConfigMap"})
	after := NewCapabilities(testKubeVersion, []string{"example.com/v1", "example.com/v1/Widget", "v1", "v1/ConfigMap"})
	render := func(path string, caps Capabilities) *unstructured.Unstructured {
		t.Helper()
		app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
			Source: &v1alpha1.ApplicationSource{RepoURL: dir, Path: path, TargetRevision: "main"},
		}}
		app.Name = path
		res, err := engine.RenderApp(t.Context(), app, caps)
		if err != nil {
			t.Fatal(err)
		}
		return res.Objects[0]
	}
	at := func(obj *unstructured.Unstructured) string {
		v, _, _ := unstructured.NestedString(obj.Object, "data", "at")
		return v
	}
	first := at(render("stamp", before))
	if again := at(render("stamp", before)); again != first {
		t.Fatalf("the same capabilities rendered the chart again (%s, then %s)", first, again)
	}
	widget := render("stamp", after)
	if at(widget) == first {
		t.Fatal("new capabilities reused the chart's render")
	}
	if got, _, _ := unstructured.NestedString(widget.Object, "data", "widget"); got != "served" {
		t.Errorf("data.widget = %q after the API version was added, want served", got)
	}
	if again := at(render("stamp", after)); again != at(widget) {
		t.Errorf("the new capabilities' render was not kept (%s, then %s)", at(widget), again)
	}
	render("plain", before)
	marked := 0
	for _, el := range engine.cache.items { // mark the directory's entry, to tell a hit
		if e := el.Value.(*cacheEntry); e.caps == "" {
			e.objects = []byte(`[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-cache"}}]`)
			marked++
		}
	}
	if marked != 1 {
		t.Fatalf("%d entries rendered for any capabilities, want the directory's", marked)
	}
	if got := render("plain", after).GetName(); got != "from-cache" {
		t.Errorf("a directory rendered again for other capabilities (%s)", got)
	}
}

// stampTemplate writes the time each render of its chart ran, and whether
// the destination serves example.com/v1 Widgets.
const stampTemplate = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stamp}\n" +
	"data:\n  at: {{ now | date \"15:04:05.000000000\" | quote }}\n" +
	"  {{- if .Capabilities.APIVersions.Has \"example.com/v1/Widget\" }}\n  widget: served\n  {{- end }}\n"

func TestFreshRenderReplacesTheCachedResult(t *testing.T) {
	dir := t.TempDir()
	folder.Write(t, dir, map[string]string{
		"stamp/Chart.yaml": "apiVersion: v2\nname: stamp\nversion: 1.0.0\n",
		// Each render of the chart writes the time it ran.
		"stamp/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stamp}\n" +
			"data: {at: {{ now | date \"15:04:05.000000000\" | quote }}}\n",
	})
	commitAll(t, dir)
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source: &v1alpha1.ApplicationSource{RepoURL: dir, Path: "stamp", TargetRevision: "main"},
	}}
	app.Name = "stamp"
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{})})
	render := func(fresh bool) string {
		t.Helper()
		res, err := engine.RenderAppWith(t.Context(), app, AppOptions{Capabilities: Capabilities{KubeVersion: testKubeVersion}, Fresh: fresh})
		if err != nil {
			t.Fatal(err)
		}
		at, _, _ := unstructured.NestedString(res.Objects[0].Object, "data", "at")
		return at
	}
	first := render(false)
	if again := render(false); again != first {
		t.Fatalf("a second render ran the chart again (%s, then %s)", first, again)
	}
	fresh := render(true)
	if fresh == first {
		t.Errorf("a fresh render returned the cached result (%s)", fresh)
	}
	if again := render(false); again != fresh {
		t.Errorf("the fresh result did not replace the cached one: %s, want %s", again, fresh)
	}
}
