package source

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJoin(t *testing.T) {
	tests := map[string]struct {
		base, p string
		opts    JoinOptions
		want    string
		wantErr string
	}{
		"relative":                        {base: "charts/app", p: "values.yaml", want: "charts/app/values.yaml"},
		"up inside the repo":              {base: "charts/app", p: "../../common/values.yaml", want: "common/values.yaml"},
		"root itself":                     {base: "charts", p: "..", want: "."},
		"dot dot out of the repo":         {base: "chart", p: "../../etc/passwd", wantErr: `path "../../etc/passwd" leaves the repository root`},
		"dot dot in the middle":           {base: ".", p: "a/../../b", wantErr: `path "a/../../b" leaves the repository root`},
		"absolute refused":                {base: ".", p: "/etc/passwd", wantErr: `path "/etc/passwd" is absolute; use a path relative to the source`},
		"absolute from root":              {base: "charts/app", p: "/envs/prod.yaml", opts: JoinOptions{AbsoluteFromRoot: true}, want: "envs/prod.yaml"},
		"absolute from root climbing out": {base: ".", p: "/../etc/passwd", opts: JoinOptions{AbsoluteFromRoot: true}, wantErr: `path "/../etc/passwd" leaves the repository root`},
		"url":                             {base: ".", p: "https://example.com/v.yaml", wantErr: `path "https://example.com/v.yaml" is a URL; only files inside the repository are allowed`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Join(tc.base, tc.p, tc.opts)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Join (-want +got):\n%s", diff)
			}
		})
	}
}
