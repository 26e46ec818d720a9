package render

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/source"
)

func TestParseLimits(t *testing.T) {
	tests := map[string]struct {
		data    map[string]string
		want    Limits
		wantErr string
	}{
		"defaults": {
			want: Limits{MaxManifestSize: DefaultMaxManifestSize, MaxDirectorySize: DefaultMaxDirectorySize, MaxAppSize: DefaultMaxAppSize},
		},
		"quantities as Argo CD writes them": {
			data: map[string]string{KeyMaxManifestSize: "5Mi", KeyMaxDirectorySize: "20M", KeyMaxAppSize: " 1G "},
			want: Limits{MaxManifestSize: 5 << 20, MaxDirectorySize: 20_000_000, MaxAppSize: 1_000_000_000},
		},
		"not a size": {
			data: map[string]string{KeyMaxDirectorySize: "ten megs"}, wantErr: `argocd-cm key reposerver.max.combined.directory.manifests.size: "ten megs" is not a positive size`,
		},
		"zero": {
			data: map[string]string{KeyMaxAppSize: "0"}, wantErr: `argocd-cm key reposerver.max.combined.manifests.size: "0" is not a positive size`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseLimits(tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

// Helm's output counts against the app's limit, and a render that came
// from the cache counts too.
func TestAppLimitCountsEveryTool(t *testing.T) {
	repo := bigChartRepo(t, 10)
	engine := NewEngine(EngineOptions{Repos: source.NewRepos(source.ReposOptions{})})
	caps := Capabilities{KubeVersion: testKubeVersion}
	_, err := engine.RenderAppWith(t.Context(), bigChartApp(repo), AppOptions{Capabilities: caps, Limits: Limits{MaxAppSize: 1000}})
	if want := "helm template of chart big at big: "; err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "over the limit of 1.0k (argocd-cm reposerver.max.combined.manifests.size raises it)") {
		t.Fatalf("error = %v, want Helm's output over the app limit", err)
	}
	if _, err := engine.RenderAppWith(t.Context(), bigChartApp(repo), AppOptions{Capabilities: caps}); err != nil {
		t.Fatal(err)
	}
	_, err = engine.RenderAppWith(t.Context(), bigChartApp(repo), AppOptions{Capabilities: caps, Limits: Limits{MaxAppSize: 1000}})
	var size *SizeError
	if !errors.As(err, &size) || size.What != "rendered manifests of the app so far" {
		t.Fatalf("error = %v, want the cached render over the app limit", err)
	}
}

// A plugin's output read through the budget stops at the limit.
func TestBudgetReader(t *testing.T) {
	b := NewBudget(1000, KeyMaxAppSize)
	n, err := io.Copy(io.Discard, b.Reader("plugin output", strings.NewReader(strings.Repeat("x", 5000))))
	var size *SizeError
	if !errors.As(err, &size) || size.What != "plugin output" || n > 1000+32<<10 {
		t.Fatalf("copied %d bytes, error %v; want a SizeError for plugin output soon after 1000 bytes", n, err)
	}
	if _, err := b.Reader("again", strings.NewReader("y")).Read(make([]byte, 1)); !errors.As(err, &size) {
		t.Errorf("a spent budget read on: %v", err)
	}
}
