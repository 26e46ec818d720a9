package cli

import "testing"

func TestVersion(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
	}{
		"text":           {args: []string{"version"}, golden: "version.txt"},
		"json":           {args: []string{"version", "-o", "json"}, golden: "version.json"},
		"yaml":           {args: []string{"version", "-o", "yaml"}, golden: "version.yaml"},
		"unknown format": {args: []string{"version", "-o", "xml"}, wantErr: `unknown output format "xml": use one of [text json yaml]`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := runCLI(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, stable(out))
		})
	}
}
