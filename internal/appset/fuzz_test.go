package appset

import (
	"testing"
	"time"
)

// FuzzTemplate renders any template string, in both template modes, with
// generator-like parameters: it never panics, ends quickly and produces at
// most maxTemplateOutput bytes.
func FuzzTemplate(f *testing.F) {
	for _, seed := range []string{
		"{{.path.basename}}-{{.cluster}}", "{{path.basename}}", "{{ normalize .name }}",
		`{{ repeat 1000000000 "x" }}`, `{{ range until 1000000000 }}x{{ end }}`,
		`{{ range $i := until 1000 }}{{ range until 1000 }}{{ repeat 1000 "x" }}{{ end }}{{ end }}`,
		`{{ printf "%999999999d" 1 }}`, `{{ randAlphaNum 100000000 }}`, `{{ indent 100000 (repeat 1000 "\n") }}`,
		`{{ toYaml . | fromYaml }}`, `{{ template "x" }}`, `{{ define "a" }}{{ template "a" }}{{ end }}{{ template "a" }}`,
		`{{ slugify 10 false .name }}`, `{{`, `{{ .a.b.c.d }}`,
	} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, tmpl string, goTemplate bool) {
		r, err := newRenderer(goTemplate, []string{"missingkey=error"})
		if err != nil {
			t.Fatal(err)
		}
		p := params{"name": "Guest Book", "cluster": "in-cluster", "path": map[string]any{"basename": "app", "path": "apps/app"}}
		start := time.Now()
		out, err := r.render(tmpl, p)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("rendering %q took %s", tmpl, took)
		}
		if err == nil && len(out) > maxTemplateOutput {
			t.Fatalf("rendering %q gave %d bytes, over the limit", tmpl, len(out))
		}
	})
}
