package diagram

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/testenv"
)

// TestGraphGolden draws each graph of testdata/graph and compares it with
// the .svg file beside it.
func TestGraphGolden(t *testing.T) {
	for name, b := range testenv.Fixtures(t, "graph") {
		t.Run(name, func(t *testing.T) {
			var f struct {
				Graph Graph `json:"graph"`
			}
			if err := yaml.UnmarshalStrict(b, &f); err != nil {
				t.Fatal(err)
			}
			svg, err := f.Graph.SVG()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "graph", name, string(svg))
			if strings.Contains(string(svg), "<script") || strings.Contains(string(svg), "javascript:") {
				t.Errorf("markup from the input reached the SVG:\n%s", svg)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	for name, tc := range map[string]struct {
		in   []string
		want []string
	}{
		"short":         {in: []string{"waits on app-a"}, want: []string{"waits on app-a"}},
		"wrapped words": {in: []string{"waits on Deployment storage/provisioner: 0/1 ready"}, want: []string{"waits on Deployment", "storage/provisioner: 0/1", "ready"}},
		"cut after three lines": {
			in:   []string{"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"},
			want: []string{"one two three four five six", "seven eight nine ten eleven", "twelve thirteen fourteen …"},
		},
		"a word longer than a line": {in: []string{strings.Repeat("x", 50)}, want: []string{strings.Repeat("x", lineChars-1) + "…"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, wrap(tc.in, maxLines)); diff != "" {
				t.Errorf("wrap (-want +got):\n%s", diff)
			}
		})
	}
}
