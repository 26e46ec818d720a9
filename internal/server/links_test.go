package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCWE79LinkAnnotations guards against stored cross-site scripting
// (CWE-79) through Argo CD's link annotations: only http and https URLs
// become links.
func TestCWE79LinkAnnotations(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        []externalLink
	}{
		"http and https kept, sorted by title": {
			annotations: map[string]string{
				linkAnnotationPrefix + "grafana": "https://grafana.example/d/app", linkAnnotationPrefix + "docs": "http://docs.example",
				"other.example/link": "https://not-a-link.example",
			},
			want: []externalLink{{"docs", "http://docs.example"}, {"grafana", "https://grafana.example/d/app"}},
		},
		"script and data schemes dropped in any case and spacing": {
			annotations: map[string]string{
				linkAnnotationPrefix + "a": "javascript:alert(document.cookie)", linkAnnotationPrefix + "b": " JaVaScRiPt:alert(1)",
				linkAnnotationPrefix + "c": "data:text/html,<script>alert(1)</script>", linkAnnotationPrefix + "d": "vbscript:msgbox(1)",
				linkAnnotationPrefix + "e": "java\tscript:alert(1)", linkAnnotationPrefix + "f": "//evil.example/no-scheme",
				linkAnnotationPrefix + "g": "/relative/path", linkAnnotationPrefix + "h": "https://", linkAnnotationPrefix + "": "https://no-title.example",
				linkAnnotationPrefix + "i": "file:///etc/passwd",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, externalLinks(tc.annotations)); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}
