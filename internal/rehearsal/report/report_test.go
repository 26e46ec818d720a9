package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/diagram"
	"github.com/wavecd/wavecd/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestReportSummaryGolden prints the text summary of each report in
// testdata/report and compares it with the .golden file beside it.
func TestReportSummaryGolden(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "report") {
		t.Run(name, func(t *testing.T) {
			var rep Report
			if err := yaml.UnmarshalStrict(b, &rep); err != nil {
				t.Fatal(err)
			}
			rep.Summary = Summarize(rep.Runs)
			var out bytes.Buffer
			if err := rep.WriteSummary(&out); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "report", name+".golden")
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("summary mismatch (-want +got):\n%s", diff)
			}
			var html bytes.Buffer
			if err := WriteHTML(&html, &rep); err != nil {
				t.Fatalf("HTML report: %v", err)
			}
			for _, banned := range []string{"<script", "http://", "https://", "@import", "url(http"} {
				if strings.Contains(html.String(), banned) {
					t.Errorf("HTML report holds %q: it must be self-contained", banned)
				}
			}
		})
	}
}

// chartCase is one case of testdata/chart: a run and the charts wanted.
type chartCase struct {
	Run  RunResult `json:"run"`
	Want struct {
		End    float64                    `json:"end"`
		Lines  []diagram.Line             `json:"lines"`
		Rows   []diagram.Row              `json:"rows"`
		Series map[string][]diagram.Point `json:"series"`
	} `json:"want"`
}

// TestCharts checks what a run's records become in the timeline charts.
func TestCharts(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "chart") {
		t.Run(name, func(t *testing.T) {
			var tc chartCase
			if err := yaml.UnmarshalStrict(b, &tc); err != nil {
				t.Fatal(err)
			}
			apps := appChart(tc.Run)
			if apps.End != tc.Want.End {
				t.Errorf("end %g, want %g", apps.End, tc.Want.End)
			}
			if diff := cmp.Diff(tc.Want.Lines, apps.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			ignore := cmpopts.IgnoreFields(diagram.Row{}, "Title")
			if diff := cmp.Diff(tc.Want.Rows, apps.Rows, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			series := map[string][]diagram.Point{}
			for _, l := range seriesChart(tc.Run).Lines {
				if _, ok := tc.Want.Series[l.Class]; ok {
					series[l.Class] = l.Points
				}
			}
			if diff := cmp.Diff(tc.Want.Series, series, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	for name, tc := range map[string]struct {
		runs []RunResult
		want Summary
	}{
		"none": {want: Summary{}},
		"mixed": {
			runs: []RunResult{
				{Verdict: Converged, At: 20.04}, {Verdict: Stalled, At: 21.6}, {Verdict: Converged, At: 18},
				{Verdict: Converged, At: 30}, {Verdict: TimedOut, At: 100}, {Verdict: Converged, At: 25},
			},
			want: Summary{Runs: 6, Converged: 4, Stalled: 1, TimedOut: 1, ConvergedIn: []float64{18, 22.5, 30}, StalledAt: []float64{21.6, 21.6, 21.6}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Summarize(tc.runs)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}
