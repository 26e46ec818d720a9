package appset

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// renderer renders one string at a time: `{{param}}` substitution
// (fasttemplate) or text/template (goTemplate).
type renderer struct {
	goTemplate bool
	options    []string
	// parsed caches goTemplate strings: a template is rendered once per
	// parameter set with the same strings.
	parsed map[string]*template.Template
}

// missingKeyOptions are the goTemplateOptions text/template accepts (an
// unknown one would make it panic).
var missingKeyOptions = []string{"missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error"}

func newRenderer(goTemplate bool, options []string) (*renderer, error) {
	for _, o := range options {
		if !slices.Contains(missingKeyOptions, o) {
			return nil, fmt.Errorf("goTemplateOptions: %q is not one of %s", o, strings.Join(missingKeyOptions, ", "))
		}
	}
	return &renderer{goTemplate: goTemplate, options: options, parsed: map[string]*template.Template{}}, nil
}

// render renders s with p.
func (r *renderer) render(s string, p params) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	if !r.goTemplate {
		return fastRender(s, p)
	}
	t, ok := r.parsed[s]
	if !ok {
		var err error
		t, err = template.New("").Funcs(funcMap()).Parse(s)
		if err != nil {
			return "", fmt.Errorf("failed to parse template %s: %w", s, err)
		}
		for _, o := range r.options {
			t = t.Option(o)
		}
		r.parsed[s] = t
	}
	var buf cappedWriter
	if err := t.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("failed to execute go template %s: %w", s, err)
	}
	return buf.String(), nil
}

// fastRender replaces each `{{ name }}` whose trimmed name is a string
// parameter; unknown names stay as they are, as Argo CD's fasttemplate
// rendering leaves them.
func fastRender(s string, p params) (string, error) {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return "", fmt.Errorf("invalid template %q: cannot find end tag \"}}\"", s)
		}
		tag := rest[:j]
		rest = rest[j+2:]
		name := strings.TrimSpace(tag)
		if v, ok := p[name].(string); ok && name != "" {
			b.WriteString(v)
			continue
		}
		b.WriteString("{{" + tag + "}}")
	}
}

// funcMap is Sprig without the functions that read the controller's
// environment, with sizes bounded (limitFuncs), plus the functions Argo CD
// adds.
var funcMap = sync.OnceValue(func() template.FuncMap {
	m := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(m, name)
	}
	limitFuncs(m)
	m["normalize"] = normalize
	m["slugify"] = slugify
	m["toYaml"] = toYAML
	m["fromYaml"] = fromYAML
	m["fromYamlArray"] = fromYAMLArray
	return m
})

// slugify normalizes the last argument and cuts it to a maximum length
// (first argument, default 50), at a '-' when smart truncation (second
// argument, default true) is on.
func slugify(args ...any) (string, error) {
	maxLen, smart, name := 50, true, ""
	for i, a := range args {
		var ok bool
		switch i {
		case len(args) - 1:
			name, ok = a.(string)
		case 0:
			maxLen, ok = a.(int)
		case 1:
			smart, ok = a.(bool)
		default:
			return "", fmt.Errorf("slugify: at most 3 arguments (max length, smart truncation, name), got %d", len(args))
		}
		if !ok {
			return "", fmt.Errorf("slugify: argument %d (%v) has the wrong type", i+1, a)
		}
	}
	var b strings.Builder
	for _, c := range normalize(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			b.WriteRune(c)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-_")
	if maxLen <= 0 || len(slug) <= maxLen {
		return slug, nil
	}
	if smart {
		if i := strings.LastIndex(slug[:maxLen+1], "-"); i > 0 {
			return slug[:i], nil
		}
	}
	return strings.Trim(slug[:maxLen], "-_"), nil
}

func toYAML(v any) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(out), "\n")
}

func fromYAML(s string) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(s string) []any {
	var a []any
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		a = []any{err.Error()}
	}
	return a
}
