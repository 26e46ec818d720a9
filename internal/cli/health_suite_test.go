package cli

import (
	"errors"
	"testing"
)

func TestHealthTest(t *testing.T) {
	tests := map[string]struct {
		args     []string
		golden   string
		wantCode int // 0: no error
	}{
		"all tests pass": {
			args:   []string{healthData + "passing"},
			golden: "health-test-passing.txt",
		},
		"failures are listed": {
			args:     []string{healthData + "lib"},
			golden:   "health-test-failing.txt",
			wantCode: 1,
		},
		"argocd-cm override is tested instead of the library": {
			args:     []string{healthData + "passing", "--argocd-cm", healthData + "argocd-cm.yaml"},
			golden:   "health-test-argocd-cm.txt",
			wantCode: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := runCLI(t, append([]string{"health", "test"}, tc.args...)...)
			assertGolden(t, tc.golden, out)
			var exitErr *ExitError
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantCode != 0 && (!errors.As(err, &exitErr) || exitErr.Code != tc.wantCode):
				t.Fatalf("error = %v, want exit code %d", err, tc.wantCode)
			}
		})
	}
}
