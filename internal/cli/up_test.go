package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/rehearsal"
)

// The rehearsal itself (cluster, controller, timeline) is tested end to end
// in internal/rehearsal; these tests cover the commands around it.
func TestUpDownCommands(t *testing.T) {
	tests := map[string]struct {
		args    []string
		chdir   bool
		golden  string
		wantErr string
	}{
		"up help":              {args: []string{"up", "--help"}, golden: "up-help.txt"},
		"down help":            {args: []string{"down", "--help"}, golden: "up-down-help.txt"},
		"down with no cluster": {args: []string{"down"}, chdir: true, golden: "up-down-none.txt"},
		"settings that are not settings": {
			args:    []string{"up", "--settings", "../../examples/healthcheck-poc/apps/root.yaml"},
			wantErr: "settings ../../examples/healthcheck-poc/apps/root.yaml: Application root is not a v1 ConfigMap or Secret",
		},
		"a mirror without a path": {args: []string{"up", "--mirror", "https://github.com/org/repo"}, wantErr: `--mirror: mirror "https://github.com/org/repo": want URL=PATH`},
		"arguments":               {args: []string{"up", "examples"}, wantErr: `unknown command "examples" for "wavecd up"`},
		"nodes and a profile":     {args: []string{"up", "--nodes", "3", "--profile", "p.yaml"}, wantErr: "--nodes and --profile exclude each other: set node groups in the profile"},
		"a time scale of zero":    {args: []string{"up", "--time-scale", "0"}, wantErr: "--time-scale 0: want a factor above 0, such as 0.1"},
		"a profile that is not there": {
			args: []string{"up", "--profile", "missing-profile.yaml"}, wantErr: "--profile: stat *missing-profile.yaml: no such file or directory",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out string
			var err error
			run := func(t *testing.T) { out, _, err = runCLI(t, tc.args...) }
			if tc.chdir {
				// A subtest, so the working directory is back for assertGolden.
				t.Run("in an empty folder", func(t *testing.T) { t.Chdir(t.TempDir()); run(t) })
			} else {
				run(t)
			}
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

func TestUpExitCodes(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"settled":     {err: nil, want: 0},
		"stalled":     {err: fmt.Errorf("up: %w", &rehearsal.NotSettledError{Reason: "stalled: nothing changed for 2m0s"}), want: 3},
		"timed out":   {err: &rehearsal.NotSettledError{Reason: "not settled within 10m0s"}, want: 3},
		"other error": {err: errors.New("wavecd-localcluster not found"), want: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := upExit(tc.err)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("upExit(nil) = %v", err)
				}
				return
			}
			if got := ExitCode(err); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("error %q lost the cause %q", err, tc.err)
			}
		})
	}
}
