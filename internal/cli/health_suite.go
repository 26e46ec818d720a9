package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/health"
)

// HealthTest runs the health_test.yaml files of a customizations library.
type HealthTest struct {
	healthSources
}

// Run runs the tests below h.LibraryDir and prints one line per failure and a
// summary; it returns an ExitError with code 1 when any test failed.
func (h *HealthTest) Run(ctx context.Context, s Streams) error {
	opts, err := h.options()
	if err != nil {
		return err
	}
	assessor, err := h.newAssessor(opts)
	if err != nil {
		return err
	}
	results, err := assessor.RunTests(ctx, h.LibraryDir)
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if !r.Passed() {
			failed++
			if err := printTestFailure(s.Out, r); err != nil {
				return err
			}
		}
	}
	if _, err := fmt.Fprintf(s.Out, "%d passed, %d failed\n", len(results)-failed, failed); err != nil {
		return err
	}
	if failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d health tests failed", failed, len(results))}
	}
	return nil
}

func printTestFailure(w io.Writer, r health.TestResult) error {
	where := r.File
	if r.Input != "" {
		where += ": " + r.Input
	}
	if r.Err != nil {
		_, err := fmt.Fprintf(w, "FAIL %s: %v\n", where, r.Err)
		return err
	}
	_, err := fmt.Fprintf(w, "FAIL %s: want %s %q, got %s %q\n", where, r.Want.Status, r.Want.Message, r.Got.Status, r.Got.Message)
	return err
}

func newHealthTestCommand(s Streams) *cobra.Command {
	h := &HealthTest{}
	cmd := &cobra.Command{
		Use:   "test DIR",
		Short: "Run the health_test.yaml files of a Lua health check library",
		Long: `Load DIR as a customizations library (<group>/<Kind>/health.lua, "_" in a
folder name as wildcard, as in Argo CD's resource_customizations) and run every
health_test.yaml below it. A test file lists cases:

  tests:
  - healthStatus:
      status: Degraded
      message: "Back-off pulling image"
    inputPath: testdata/degraded.yaml

Each input goes to the Lua script the engine would pick for its group and kind
(an --argocd-cm override first, then the library), run alone as Argo CD's own
tests do: no "Pending deletion" pre-check, no built-in fallback. Library
scripts get the safe Lua libraries (base, table, string, math, os.time and
os.date) unless the argocd-cm sets resource.customizations.useOpenLibs.<group>_<Kind>.
Status and message must match exactly (an absent message is ""). Prints one
line per failure and ends with "N passed, M failed"; exits 1 when any test failed.`,
		Example: `  wavecd health test ./resource_customizations
  wavecd health test ./health-checks --argocd-cm argocd-cm.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h.LibraryDir = args[0]
			return h.Run(cmd.Context(), s)
		},
	}
	h.addFlags(cmd)
	return cmd
}
