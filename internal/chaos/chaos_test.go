package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/testenv"
)

var (
	runs  = flag.Int("runs", 5, "runs of the chaos harness")
	seed  = flag.Uint64("seed", 0, "random seed (0: from the clock; printed)")
	table = flag.String("table", "", "also write the result table (Markdown) to this file")
	// apiDown is the longest API server outage; each lasts between 2 s and it.
	only    = flag.String("scenario", "", "run only this scenario (controller kill -9, API server restart, Git outage, sharded replica kill -9)")
	apiDown = flag.Duration("api-down", 6*time.Second, "longest API server outage")
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// harness is what every run shares: the cluster, a client, the wavecd
// binary and where logs go.
type harness struct {
	env    *testenv.Env
	kube   client.Client
	wavecd string
	logDir string
}

func newHarness(t *testing.T) *harness {
	env := testenv.Get(t)
	ctx := context.Background()
	ext, err := apiextensions.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := install.InstallCRDs(ctx, ext, install.CRDOptions{}); err != nil {
		t.Fatal(err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := testenv.BuildWavecd(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	kube := env.AppClient(t)
	logDir := filepath.Join(root, "_artifacts", "chaos")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &harness{env: env, kube: kube, wavecd: bin, logDir: logDir}
}

// TestChaos runs the harness -runs times (five in the normal suite) and
// fails on any duplicate hook, lost object or stuck run.
func TestChaos(t *testing.T) {
	h := newHarness(t)
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -args -seed=%d)", s, s)
	rng := rand.New(rand.NewPCG(s, s>>1|1))
	var results []result
	for i := range *runs {
		sc := scenarioOf(i)
		t.Run(fmt.Sprintf("%02d %s", i+1, sc), func(t *testing.T) {
			res := h.runOnce(t, sc, rng)
			results = append(results, res)
			t.Logf("kills=%d duplicate hooks=%d lost objects=%d stuck=%v recovery=%s %s",
				res.kills, res.duplicateHooks, res.lostObjects, res.stuck, res.recovery.Round(100*time.Millisecond), res.detail)
			if res.duplicateHooks > 0 || res.lostObjects > 0 || res.stuck {
				t.Errorf("run failed: %s", res.detail)
			}
		})
	}
	report := summarize(results)
	fmt.Println(report)
	if *table != "" {
		if err := os.WriteFile(*table, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// summarize prints the results as a Markdown table: one row per
// scenario and one for all runs.
func summarize(results []result) string {
	var b strings.Builder
	b.WriteString("| scenario | runs | kills | API server restarts | Git outages | duplicate hooks | lost objects | stuck runs | recovery p50 | recovery max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	groups := map[scenario][]result{}
	for _, r := range results {
		groups[r.scenario] = append(groups[r.scenario], r)
	}
	for _, sc := range []scenario{killController, restartAPI, gitDown, loseShard} {
		if len(groups[sc]) > 0 {
			b.WriteString(row(string(sc), groups[sc]))
		}
	}
	b.WriteString(row("all", results))
	return b.String()
}

func row(name string, rs []result) string {
	var kills, api, git, dup, lost, stuck int
	var rec []time.Duration
	for _, r := range rs {
		kills, api, git = kills+r.kills, api+r.apiRestarts, git+r.gitOutages
		dup, lost = dup+r.duplicateHooks, lost+r.lostObjects
		if r.stuck {
			stuck++
		} else {
			rec = append(rec, r.recovery)
		}
	}
	slices.Sort(rec)
	p50, top := "-", "-"
	if len(rec) > 0 {
		p50, top = fmtSeconds(rec[(len(rec)-1)/2]), fmtSeconds(rec[len(rec)-1])
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n", name, len(rs), kills, api, git, dup, lost, stuck, p50, top)
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
