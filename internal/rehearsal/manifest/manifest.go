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

// ReadRoot reads the root manifest: one or more Applications, and other
// objects of the controller's namespace such as AppProjects. Objects with
// no namespace get namespace; one naming another is an error.
func ReadRoot(path, namespace string) ([]*unstructured.Unstructured, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, fmt.Errorf("read root manifest: %w", err)
	}
	if len(Apps(objs)) == 0 {
		return nil, fmt.Errorf("root manifest %s holds no argoproj.io Application", path)
	}
	return objs, inNamespace(path, objs, namespace)
}

// IsApplication reports whether o is an argoproj.io Application.
func IsApplication(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == v1alpha1.Group && gvk.Kind == v1alpha1.ApplicationKind
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
// root Applications; Helm chart sources are left out.
func gitSources(objs []*unstructured.Unstructured) [][2]string {
	var out [][2]string
	for _, app := range Apps(objs) {
		var sources []any
		if s, ok, _ := unstructured.NestedMap(app.Object, "spec", "source"); ok {
			sources = append(sources, s)
		}
		if list, ok, _ := unstructured.NestedSlice(app.Object, "spec", "sources"); ok {
			sources = append(sources, list...)
		}
		for _, s := range sources {
			m, _ := s.(map[string]any)
			url, _ := m["repoURL"].(string)
			rev, _ := m["targetRevision"].(string)
			if _, chart := m["chart"]; url != "" && !chart {
				out = append(out, [2]string{url, rev})
			}
		}
	}
	return out
}

// Mirrors maps the root Applications' Git repository URLs to path.
func Mirrors(objs []*unstructured.Unstructured, path string) source.Mirrors {
	m := source.Mirrors{}
	for _, s := range gitSources(objs) {
		m.Add(s[0], path)
	}
	return m
}

var branchName = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
var hexRevision = regexp.MustCompile(`^[0-9a-fA-F]{7,40}$`)

// Branches lists the target revisions of the root Applications that name
// branches, so a snapshot can offer them.
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
