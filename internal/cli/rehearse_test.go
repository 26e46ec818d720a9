package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/rehearsal"
	"github.com/wavecd/wavecd/internal/rehearsal/report"
)

// The rehearsal itself runs end to end in internal/rehearsal; these tests
// cover the command around it.
func TestRehearseCommand(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
	}{
		"help":             {args: []string{"rehearse", "--help"}, golden: "rehearse-help.txt"},
		"no scenario":      {args: []string{"rehearse", "../../examples/calico-karpenter"}, wantErr: `required flag(s) "scenario" not set`},
		"no folder":        {args: []string{"rehearse", "--scenario", "x"}, wantErr: "accepts 1 arg(s), received 0"},
		"an output format": {args: []string{"rehearse", ".", "--scenario", "x", "-o", "yaml"}, wantErr: `--output "yaml": want text or json`},
		"a negative time scale": {args: []string{"rehearse", ".", "--scenario", "x", "--time-scale", "-1"},
			wantErr: "--time-scale -1: want a factor above 0, such as 0.1"},
		"unknown scenario": {
			args:    []string{"rehearse", "../../examples/calico-karpenter", "--scenario", "nope"},
			wantErr: "scenarios of *: health-gated, no-health, no-health-lbc, no-health-lbc-same-wave, static-nodes",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := runCLI(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !matchesError(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, out)
		})
	}
}

// matchesError reports whether got is want, or ends like want where want
// starts with "scenarios of *" (an absolute path in between).
func matchesError(got, want string) bool {
	if prefix, suffix, ok := strings.Cut(want, "*"); ok {
		i := strings.Index(got, prefix)
		return i >= 0 && strings.HasSuffix(got, suffix)
	}
	return got == want
}

func TestRehearseExitCodes(t *testing.T) {
	notConverged := &rehearsal.NotConvergedError{Scenario: "health-gated", Summary: report.Summary{Runs: 1, Stalled: 1}}
	tests := map[string]struct {
		err  error
		want int
	}{
		"converged":     {err: nil, want: 0},
		"not converged": {err: notConverged, want: 3},
		"other error":   {err: errors.New("wavecd-localcluster not found"), want: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := rehearseExit(tc.err)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("rehearseExit(nil) = %v", err)
				}
				return
			}
			if got := ExitCode(err); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
			if err.Error() != tc.err.Error() {
				t.Errorf("error %q, want %q", err, tc.err)
			}
		})
	}
}
