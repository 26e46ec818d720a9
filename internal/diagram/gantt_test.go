package diagram

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/<dir>/<name>.svg, rewriting it with
// -update, and checks that it is well-formed XML.
func golden(t *testing.T, dir, name, got string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(got))
	for {
		if _, err := dec.Token(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, got)
		}
	}
	path := filepath.Join("testdata", dir, name+".svg")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("SVG mismatch (-want +got):\n%s", diff)
	}
}

// TestGanttGolden draws each chart of testdata/gantt and compares it with
// the .svg file beside it.
func TestGanttGolden(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "gantt") {
		t.Run(name, func(t *testing.T) {
			var f struct {
				CriticalPath bool  `json:"criticalPath"`
				Chart        Gantt `json:"chart"`
			}
			if err := yaml.UnmarshalStrict(b, &f); err != nil {
				t.Fatal(err)
			}
			if f.CriticalPath {
				MarkCriticalPath(f.Chart.Rows)
			}
			svg, err := f.Chart.SVG()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "gantt", name, string(svg))
			if strings.Contains(string(svg), "<script") || strings.Contains(string(svg), "javascript:") {
				t.Errorf("markup from the input reached the SVG:\n%s", svg)
			}
		})
	}
}

func TestSeriesGolden(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "series") {
		t.Run(name, func(t *testing.T) {
			var f struct {
				Series Series `json:"series"`
			}
			if err := yaml.UnmarshalStrict(b, &f); err != nil {
				t.Fatal(err)
			}
			svg, err := f.Series.SVG()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "series", name, string(svg))
		})
	}
}

func TestMarkCriticalPath(t *testing.T) {
	bar := func(from, to float64) []Segment { return []Segment{{From: from, To: to, Phase: Syncing}} }
	for name, tc := range map[string]struct {
		rows []Row
		want []string
	}{
		"waves of one parent: the slower app of each wave": {
			rows: []Row{
				{ID: "root", Segments: bar(0, 30)},
				{ID: "a", Parent: "root", Wave: 0, Segments: bar(1, 5)},
				{ID: "b", Parent: "root", Wave: 0, Segments: bar(1, 9)},
				{ID: "c", Parent: "root", Wave: 1, Segments: bar(9, 20)},
				{ID: "d", Parent: "root", Wave: 1, Segments: bar(9, 12)},
			},
			want: []string{"root", "b", "c"},
		},
		"depends-on across parents": {
			rows: []Row{
				{ID: "x", Segments: bar(0, 10)},
				{ID: "y", DependsOn: []string{"x", "missing"}, Segments: bar(10.5, 20)},
				{ID: "z", Segments: bar(0, 15)},
			},
			want: []string{"x", "y"},
		},
		"a dependency that ended after the start is not waited on": {
			rows: []Row{
				{ID: "x", Segments: bar(0, 10)},
				{ID: "y", DependsOn: []string{"x"}, Segments: bar(2, 20)},
			},
			want: []string{"y"},
		},
		"nested app of apps: the grandchild ends last": {
			rows: []Row{
				{ID: "root", Segments: bar(0, 40)},
				{ID: "infra", Parent: "root", Wave: 0, Segments: bar(1, 30)},
				{ID: "dns", Parent: "infra", Wave: 0, Segments: bar(2, 10)},
				{ID: "certs", Parent: "infra", Wave: 1, Segments: bar(10, 29)},
				{ID: "web", Parent: "root", Wave: 0, Segments: bar(1, 5)},
			},
			want: []string{"root", "infra", "dns", "certs"},
		},
		"nothing started": {
			rows: []Row{{ID: "a", Never: true}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			MarkCriticalPath(tc.rows)
			var got []string
			for _, r := range tc.rows {
				if r.Critical {
					got = append(got, r.ID)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("critical rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTicks(t *testing.T) {
	for name, tc := range map[string]struct {
		end  float64
		want string
	}{
		"7.3s in 1s steps":   {end: 7.3, want: "0s 1s 2s 3s 4s 5s 6s 7s 8s"},
		"30s in 5s steps":    {end: 30, want: "0s 5s 10s 15s 20s 25s 30s"},
		"2 minutes":          {end: 110, want: "0s 10s 20s 30s 40s 50s 60s 70s 80s 90s 100s 110s"},
		"10 minutes":         {end: 590, want: "0s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m"},
		"two hours":          {end: 7000, want: "0s 10m 20m 30m 40m 50m 1h 1h10m 1h20m 1h30m 1h40m 1h50m 2h"},
		"three days":         {end: 3 * 86400, want: "0s 6h 12h 18h 1d 1d6h 1d12h 1d18h 2d 2d6h 2d12h 2d18h 3d"},
		"nothing happened":   {end: 0, want: "0s 1s"},
		"a second and a bit": {end: 1.2, want: "0s 1s 2s"},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, tk := range newScale(tc.end).ticks() {
				got = append(got, tk.Label)
			}
			if diff := cmp.Diff(tc.want, strings.Join(got, " ")); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSummary checks the chart's text alternative names the critical path
// and the stalls.
func TestSummary(t *testing.T) {
	g := Gantt{Rows: []Row{
		{ID: "a", Label: "a", Critical: true, Segments: []Segment{{From: 0, To: 5, Phase: Syncing}}, Marks: []Mark{{At: 5, Kind: MarkHealthy}}},
		{ID: "b", Label: "b", Critical: true, Segments: []Segment{{From: 5, To: 9, Phase: Syncing}, {From: 9, To: 12, Phase: Stalled}}},
		{ID: "c", Label: "c", Never: true},
	}}
	want := "3 rows over 12s: 2 started, 1 turned Healthy. Critical path: a → b. b stalled."
	if got := g.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	svg, err := g.SVG()
	if err != nil {
		t.Fatal(err)
	}
	buf.WriteString(string(svg))
	if !strings.Contains(buf.String(), "<desc id=\"timeline-desc\">"+want+"</desc>") {
		t.Errorf("the SVG's description is not the summary:\n%s", buf.String())
	}
}
