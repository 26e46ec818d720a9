package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// readObjects decodes the YAML or JSON documents of a file, skipping empty
// ones; every object must have apiVersion, kind and a name.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d: apiVersion, kind and metadata.name are required", path, i+1)
		}
		out = append(out, u)
	}
}

// inNamespace sets the namespace of objs to ns, refusing objects that name
// another one.
func inNamespace(path string, objs []*unstructured.Unstructured, ns string) error {
	for _, o := range objs {
		switch o.GetNamespace() {
		case "":
			o.SetNamespace(ns)
		case ns:
		default:
			return fmt.Errorf("%s: %s %s is in namespace %q; a rehearsal runs the controller in %q",
				path, o.GetKind(), o.GetName(), o.GetNamespace(), ns)
		}
	}
	return nil
}

// ReadRoot reads the root manifest: one or more Applications or
// ApplicationSets, and other objects of the controller's namespace such as
// AppProjects. Objects with no namespace get namespace; one naming another
// is an error.
func ReadRoot(path, namespace string) ([]*unstructured.Unstructured, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, fmt.Errorf("read root manifest: %w", err)
	}
	if len(Apps(objs)) == 0 && len(Sets(objs)) == 0 {
		return nil, fmt.Errorf("root manifest %s holds no argoproj.io Application or ApplicationSet", path)
	}
	return objs, inNamespace(path, objs, namespace)
}

// IsApplication reports whether o is an argoproj.io Application.
func IsApplication(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == v1alpha1.Group && gvk.Kind == v1alpha1.ApplicationKind
}

// IsApplicationSet reports whether o is an argoproj.io ApplicationSet.
func IsApplicationSet(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == v1alpha1.Group && gvk.Kind == v1alpha1.ApplicationSetKind
}

// Sets returns the ApplicationSets of a root manifest.
func Sets(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var sets []*unstructured.Unstructured
	for _, o := range objs {
		if IsApplicationSet(o) {
			sets = append(sets, o)
		}
	}
	return sets
}

// Apps returns the Applications of a root manifest.
func Apps(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var apps []*unstructured.Unstructured
	for _, o := range objs {
		if IsApplication(o) {
			apps = append(apps, o)
		}
	}
	return apps
}

// Names returns the names of the Applications of a root manifest.
func Names(objs []*unstructured.Unstructured) []string {
	var names []string
	for _, a := range Apps(objs) {
		names = append(names, a.GetName())
	}
	return names
}

// gitSources returns the Git sources (repoURL and targetRevision) of the
// root Applications, and those of the root ApplicationSets that are not
// templated: their template's sources and their git generators. Helm
// chart sources are left out.
func gitSources(objs []*unstructured.Unstructured) [][2]string {
	var out [][2]string
	for _, o := range objs {
		var spec map[string]any
		switch {
		case IsApplication(o):
			spec, _, _ = unstructured.NestedMap(o.Object, "spec")
		case IsApplicationSet(o):
			spec, _, _ = unstructured.NestedMap(o.Object, "spec", "template", "spec")
			generators, _, _ := unstructured.NestedSlice(o.Object, "spec", "generators")
			out = append(out, generatorSources(generators)...)
		}
		for _, s := range specSources(spec) {
			url, _ := s["repoURL"].(string)
			rev, _ := s["targetRevision"].(string)
			if _, chart := s["chart"]; url != "" && !chart && !templated(url) && !templated(rev) {
				out = append(out, [2]string{url, rev})
			}
		}
	}
	return out
}

// specSources are the source and sources of an Application's spec.
func specSources(spec map[string]any) []map[string]any {
	var out []map[string]any
	if s, ok := spec["source"].(map[string]any); ok {
		out = append(out, s)
	}
	list, _ := spec["sources"].([]any)
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// generatorSources are the repositories of git generators, in matrix and
// merge generators too, that are not templated.
func generatorSources(generators []any) [][2]string {
	var out [][2]string
	for _, g := range generators {
		m, _ := g.(map[string]any)
		if git, ok := m["git"].(map[string]any); ok {
			url, _ := git["repoURL"].(string)
			rev, _ := git["revision"].(string)
			if url != "" && !templated(url) && !templated(rev) {
				out = append(out, [2]string{url, rev})
			}
		}
		for _, nested := range []string{"matrix", "merge"} {
			if n, ok := m[nested].(map[string]any); ok {
				list, _ := n["generators"].([]any)
				out = append(out, generatorSources(list)...)
			}
		}
	}
	return out
}

// templated reports an ApplicationSet template expression in s.
func templated(s string) bool { return strings.Contains(s, "{{") }

// Mirrors maps the Git repository URLs of the root Applications and
// ApplicationSets (gitSources) to path.
func Mirrors(objs []*unstructured.Unstructured, path string) source.Mirrors {
	m := source.Mirrors{}
	for _, s := range gitSources(objs) {
		m.Add(s[0], path)
	}
	return m
}

var branchName = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
var hexRevision = regexp.MustCompile(`^[0-9a-fA-F]{7,40}$`)

// Branches lists the target revisions of the root Applications and
// ApplicationSets that name branches, so a snapshot can offer them.
func Branches(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range gitSources(objs) {
		rev := strings.TrimPrefix(s[1], "refs/heads/")
		if rev == "" || rev == "HEAD" || seen[rev] || hexRevision.MatchString(rev) || !branchName.MatchString(rev) ||
			strings.Contains(rev, "..") || strings.HasPrefix(rev, "/") || strings.HasSuffix(rev, "/") {
			continue
		}
		seen[rev] = true
		out = append(out, rev)
	}
	return out
}
