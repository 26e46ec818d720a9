package appset

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	p := params{"name": "web", "path.basename": "app_1", "nested": map[string]any{"k": "v"}}
	tests := []struct {
		desc    string
		gotmpl  bool
		options []string
		in      string
		want    string
		wantErr string
	}{
		{desc: "fasttemplate trims spaces in tags", in: "{{ name }}-{{path.basename}}", want: "web-app_1"},
		{desc: "fasttemplate leaves unknown and non-string parameters", in: "{{other}} {{nested}} {{}}", want: "{{other}} {{nested}} {{}}"},
		{desc: "fasttemplate refuses an unclosed tag", in: "a {{name", wantErr: "cannot find end tag"},
		{desc: "goTemplate reads nested maps", gotmpl: true, in: "{{ .nested.k }}", want: "v"},
		{desc: "normalize", gotmpl: true, in: `{{ normalize "My_App.Name-" }}`, want: "my-app.name"},
		{desc: "slugify with defaults", gotmpl: true, in: `{{ slugify "Hello World_and.more" }}`, want: "hello-world-and-more"},
		{desc: "slugify cuts at a word boundary", gotmpl: true, in: `{{ slugify 12 "alpha-beta-gamma" }}`, want: "alpha-beta"},
		{desc: "slugify without smart truncation", gotmpl: true, in: `{{ slugify 12 false "alpha-beta-gamma" }}`, want: "alpha-beta-g"},
		{desc: "env is not available", gotmpl: true, in: `{{ env "HOME" }}`, wantErr: `function "env" not defined`},
		{desc: "expandenv is not available", gotmpl: true, in: `{{ expandenv "$HOME" }}`, wantErr: `function "expandenv" not defined`},
		{desc: "getHostByName is not available", gotmpl: true, in: `{{ getHostByName "example.com" }}`, wantErr: `function "getHostByName" not defined`},
		{desc: "missingkey=zero", gotmpl: true, options: []string{"missingkey=zero"}, in: "[{{ .nope }}]", want: "[<no value>]"},
		{desc: "missingkey=error", gotmpl: true, options: []string{"missingkey=error"}, in: "{{ .nope }}", wantErr: `map has no entry for key "nope"`},
		{desc: "an unknown option is refused, not a panic", gotmpl: true, options: []string{"missingkey=loud"}, in: "x", wantErr: `goTemplateOptions: "missingkey=loud" is not one of`},
	}
	for _, tt := range tests {
		r, err := newRenderer(tt.gotmpl, tt.options)
		var got string
		if err == nil {
			got, err = r.render(tt.in, p)
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error = %v, want %q", tt.desc, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.desc, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.desc, got, tt.want)
		}
	}
}
