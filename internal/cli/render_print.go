package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// sortObjects orders objects by group, kind, namespace and name, keeping
// the rendered order among equals.
func sortObjects(objs []*unstructured.Unstructured) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
		return cmp.Or(
			cmp.Compare(ga.Group, gb.Group),
			cmp.Compare(ga.Kind, gb.Kind),
			cmp.Compare(a.GetNamespace(), b.GetNamespace()),
			cmp.Compare(a.GetName(), b.GetName()),
		)
	})
}

// printObjects prints objects as a YAML stream or as a JSON v1 List.
func printObjects(w io.Writer, format string, objs []*unstructured.Unstructured) error {
	sortObjects(objs)
	if format == "json" {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o.Object
		}
		return printStructured(w, "json", map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
