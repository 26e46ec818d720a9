package server_test

import (
	"net/http"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/buildinfo"
)

// TestAPIVersion: GET /api/version tells anyone the version and a
// logged-in user how the server was built, in Argo CD's field names.
func TestAPIVersion(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	info := buildinfo.Get()
	anonymous := map[string]any{"Version": info.Version}
	tests := map[string]struct {
		token string
		want  map[string]any
	}{
		"no token":    {want: anonymous},
		"a bad token": {token: "abc.def.ghi", want: anonymous},
		"a user's token": {token: h.admin(), want: map[string]any{"Version": info.Version, "GitCommit": info.Commit,
			"GoVersion": runtime.Version(), "Compiler": runtime.Compiler, "Platform": runtime.GOOS + "/" + runtime.GOARCH}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := h.do("GET", "/api/version", tc.token, nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET /api/version: %d %s", r.status, r.body)
			}
			var got map[string]any
			h.decode(r, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GET /api/version (-want +got):\n%s", diff)
			}
		})
	}
}
