package network

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestEndpoint(t *testing.T) {
	var fixture struct {
		Cases map[string]struct {
			Method string         `json:"method"`
			Path   string         `json:"path"`
			Body   string         `json:"body"`
			Code   int            `json:"code"`
			Want   map[string]any `json:"want"`
		} `json:"cases"`
	}
	b, err := os.ReadFile("testdata/endpoint.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &fixture); err != nil {
		t.Fatal(err)
	}
	for name, tc := range fixture.Cases {
		t.Run(name, func(t *testing.T) {
			var body []byte
			if tc.Body != "" {
				if body, err = os.ReadFile(filepath.Join("testdata", tc.Body)); err != nil {
					t.Fatal(err)
				}
			}
			rec := httptest.NewRecorder()
			Endpoint().ServeHTTP(rec, httptest.NewRequest(tc.Method, tc.Path, bytes.NewReader(body)))
			var got map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("response %q: %v", rec.Body.String(), err)
			}
			want := normalize(t, tc.Want)
			if rec.Code != tc.Code {
				t.Errorf("status %d, want %d", rec.Code, tc.Code)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// normalize gives a YAML value the types of the JSON decoder (float64).
func normalize(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
