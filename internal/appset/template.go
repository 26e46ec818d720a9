package appset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// toTree turns v into a JSON tree (maps, slices, strings, json.Number,
// bools, nil).
func toTree(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeTree(raw)
}

func decodeTree(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// fromTree decodes a JSON tree into out.
func fromTree(tree any, out any) error {
	raw, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// renderTree renders every string of a JSON tree, map keys included
// (a key may be templated, e.g. an annotation name). at is the field path
// errors name. skip lists keys of the top-level map left as they are.
func (r *renderer) renderTree(v any, p params, at string, skip ...string) (any, error) {
	switch v := v.(type) {
	case string:
		out, err := r.render(v, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", displayPath(at), err)
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			rx, err := r.renderTree(x, p, at+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = rx
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if slices.Contains(skip, k) {
				out[k] = v[k]
				continue
			}
			child := joinPath(at, k)
			rk, err := r.render(k, p)
			if err != nil {
				return nil, fmt.Errorf("%s (the key): %w", displayPath(child), err)
			}
			rx, err := r.renderTree(v[k], p, child)
			if err != nil {
				return nil, err
			}
			out[rk] = rx
		}
		return out, nil
	}
	return v, nil
}

func joinPath(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func displayPath(at string) string {
	if at == "" {
		return "(root)"
	}
	return at
}

// renderApp renders the template with one parameter set into an
// Application in namespace.
func (r *renderer) renderApp(tmpl v1alpha1.ApplicationSetTemplate, p params, namespace string) (*v1alpha1.Application, error) {
	tree, err := toTree(tmpl)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	rendered, err := r.renderTree(tree, p, "template")
	if err != nil {
		return nil, err
	}
	var out v1alpha1.ApplicationSetTemplate
	if err := fromTree(rendered, &out); err != nil {
		return nil, fmt.Errorf("rendered template is not an Application: %w", err)
	}
	app := &v1alpha1.Application{Spec: out.Spec}
	app.APIVersion, app.Kind = v1alpha1.Group+"/"+v1alpha1.Version, v1alpha1.ApplicationKind
	app.Name, app.Namespace = out.Name, namespace
	app.Labels, app.Annotations, app.Finalizers = out.Labels, out.Annotations, out.Finalizers
	return app, nil
}

// mergeTemplates returns override with every field it leaves empty taken
// from base, recursively (a generator's `template` over the set's).
func mergeTemplates(override *v1alpha1.ApplicationSetTemplate, base v1alpha1.ApplicationSetTemplate) (v1alpha1.ApplicationSetTemplate, error) {
	if override == nil {
		return base, nil
	}
	o, err := toTree(override)
	if err != nil {
		return base, err
	}
	b, err := toTree(base)
	if err != nil {
		return base, err
	}
	var out v1alpha1.ApplicationSetTemplate
	if err := fromTree(fillEmpty(o, b), &out); err != nil {
		return base, fmt.Errorf("merge generator template: %w", err)
	}
	return out, nil
}

// fillEmpty returns dst with its empty values replaced by src's; maps are
// merged key by key.
func fillEmpty(dst, src any) any {
	dm, dok := dst.(map[string]any)
	sm, sok := src.(map[string]any)
	if dok && sok {
		out := maps.Clone(dm)
		for k, sv := range sm {
			out[k] = fillEmpty(out[k], sv)
		}
		return out
	}
	if isEmpty(dst) {
		return src
	}
	return dst
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case json.Number:
		f, err := v.Float64()
		return err == nil && f == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// applyTemplatePatch renders the set's templatePatch with the parameter
// set and applies it to app as a strategic merge patch. The project stays
// the template's: a patch cannot move an app to another project.
func (r *renderer) applyTemplatePatch(app *v1alpha1.Application, patch string, p params) (*v1alpha1.Application, error) {
	rendered, err := r.render(patch, p)
	if err != nil {
		return nil, fmt.Errorf("templatePatch: %w", err)
	}
	patchJSON, err := yaml.YAMLToJSON([]byte(rendered))
	if err != nil {
		return nil, fmt.Errorf("templatePatch: rendered patch is not YAML: %w", err)
	}
	if err := json.Unmarshal(patchJSON, &v1alpha1.Application{}); err != nil {
		return nil, fmt.Errorf("templatePatch: rendered patch is not an Application: %w", err)
	}
	appJSON, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(appJSON, patchJSON, v1alpha1.Application{})
	if err != nil {
		return nil, fmt.Errorf("templatePatch: %w", err)
	}
	out := &v1alpha1.Application{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("templatePatch: patched Application: %w", err)
	}
	out.Spec.Project = app.Spec.Project
	return out, nil
}
