package notify

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Notification is what a template says, and once rendered, what a service
// sends: a message for every service and the fields of each service.
// Every string field is a Go template, unless tagged notify:"literal".
type Notification struct {
	Message  string                         `json:"message,omitempty"`
	Email    *EmailNotification             `json:"email,omitempty"`
	Slack    *SlackNotification             `json:"slack,omitempty"`
	Teams    *TeamsNotification             `json:"teams,omitempty"`
	Webhook  map[string]WebhookNotification `json:"webhook,omitempty"`
	GitHub   *GitHubNotification            `json:"github,omitempty"`
	Opsgenie *OpsgenieNotification          `json:"opsgenie,omitempty"`
}

// Template is one template.<name> key, parsed.
type Template struct {
	Name string
	Notification
	// compiled holds each template text of the fields, parsed once.
	compiled map[string]*template.Template
}

// ParseTemplate reads a template's YAML and parses every field as a Go
// template with Argo CD's functions (Sprig without env and expandenv).
func ParseTemplate(name, v string) (*Template, error) {
	t := &Template{Name: name, compiled: map[string]*template.Template{}}
	if err := yaml.Unmarshal([]byte(v), &t.Notification); err != nil {
		return nil, err
	}
	var parseErr error
	err := walkStrings(reflect.ValueOf(&t.Notification).Elem(), "", func(path, s string) (string, error) {
		if _, ok := t.compiled[s]; ok || s == "" {
			return s, nil
		}
		tmpl, err := template.New(name).Funcs(funcMap()).Parse(s)
		if err != nil && parseErr == nil {
			parseErr = fmt.Errorf("%s: %w", path, err)
		}
		t.compiled[s] = tmpl
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return t, parseErr
}

// funcMap is Sprig's text functions without those reading the
// controller's environment.
func funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	return f
}

// Render renders the template with vars.
func (t *Template) Render(vars map[string]any) (*Notification, error) {
	out := t.Notification.clone()
	err := walkStrings(reflect.ValueOf(out).Elem(), "", func(path, s string) (string, error) {
		tmpl := t.compiled[s]
		if tmpl == nil {
			return s, nil
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, vars); err != nil {
			return "", fmt.Errorf("template %s: %s: %w", t.Name, path, err)
		}
		return b.String(), nil
	})
	return out, err
}

// RenderAll renders the templates in order into one notification: a later
// template's non-empty fields override an earlier one's, as when a trigger
// sends [app-sync-succeeded, github-commit-status].
func RenderAll(templates map[string]*Template, names []string, vars map[string]any) (*Notification, error) {
	out := &Notification{}
	for _, name := range names {
		t, ok := templates[name]
		if !ok {
			return nil, fmt.Errorf("template %q is not defined in %s", name, ConfigMapName)
		}
		n, err := t.Render(vars)
		if err != nil {
			return nil, err
		}
		merge(reflect.ValueOf(out).Elem(), reflect.ValueOf(n).Elem())
	}
	return out, nil
}

func (n *Notification) clone() *Notification {
	b, _ := yaml.Marshal(n)
	out := &Notification{}
	_ = yaml.Unmarshal(b, out)
	return out
}

// walkStrings calls fn on every string field, map value and slice element
// under v (except fields tagged notify:"literal") and stores its result.
func walkStrings(v reflect.Value, path string, fn func(path, s string) (string, error)) error {
	switch v.Kind() {
	case reflect.String:
		s, err := fn(path, v.String())
		if err != nil {
			return err
		}
		if v.CanSet() {
			v.SetString(s)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walkStrings(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("notify") == "literal" {
				continue
			}
			if err := walkStrings(v.Field(i), join(path, jsonName(f)), fn); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if err := walkStrings(e, join(path, fmt.Sprint(k.Interface())), fn); err != nil {
				return err
			}
			v.SetMapIndex(k, e)
		}
	case reflect.Slice:
		for i := range v.Len() {
			if err := walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn); err != nil {
				return err
			}
		}
	default: // other kinds hold no strings
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// merge copies src's set fields over dst's: non-empty strings, true
// booleans, non-nil slices, map entries, and pointed-to structs field by
// field.
func merge(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.String:
		if src.String() != "" {
			dst.Set(src)
		}
	case reflect.Bool:
		if src.Bool() {
			dst.Set(src)
		}
	case reflect.Slice:
		if !src.IsNil() {
			dst.Set(src)
		}
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(src.Type().Elem()))
		}
		merge(dst.Elem(), src.Elem())
	case reflect.Struct:
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				merge(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(src.Type()))
		}
		for _, k := range src.MapKeys() {
			dst.SetMapIndex(k, src.MapIndex(k))
		}
	default:
		if !src.IsZero() {
			dst.Set(src)
		}
	}
}
