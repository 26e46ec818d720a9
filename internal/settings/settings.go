package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The objects Argo CD reads its settings from.
const (
	ConfigMap              = "argocd-cm"
	ParamsConfigMap        = "argocd-cmd-params-cm"
	RBACConfigMap          = "argocd-rbac-cm"
	Secret                 = "argocd-secret"
	NotificationsConfigMap = "argocd-notifications-cm"
	NotificationsSecret    = "argocd-notifications-secret"
	KnownHostsConfigMap    = "argocd-ssh-known-hosts-cm"
	TLSCertsConfigMap      = "argocd-tls-certs-cm"
)

// Options configure Load.
type Options struct {
	// Namespace is Argo CD's namespace (objects without one go there;
	// objects naming another are refused).
	Namespace string
	// Now is the time of admin.passwordMtime when a values file sets an
	// admin password without it (time.Now when nil).
	Now func() time.Time
}

// Settings are the objects a settings file holds or maps to.
type Settings struct {
	// Objects are ConfigMaps and Secrets, in Namespace.
	Objects []*unstructured.Unstructured
	// Warnings name what the file holds that was left out.
	Warnings []string
	// FromValues: the file is an argo-cd Helm chart values file.
	FromValues bool
}

// Data returns the data of the ConfigMap named name (nil when absent).
func (s *Settings) Data(name string) map[string]string {
	for _, o := range s.Objects {
		if o.GetKind() == "ConfigMap" && o.GetName() == name {
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			return data
		}
	}
	return nil
}

// Load reads a settings file: ConfigMaps and Secrets, or an argo-cd Helm
// chart values file. Errors name the file and the document or key.
func Load(path string, opts Options) (*Settings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	docs, err := documents(path, b)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if len(docs) == 1 && isValues(docs[0]) {
		return fromValues(path, docs[0], opts)
	}
	s := &Settings{}
	for i, d := range docs {
		o := &unstructured.Unstructured{Object: d}
		if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
			return nil, fmt.Errorf("settings %s: document %d: apiVersion, kind and metadata.name are required "+
				"(or give an argo-cd Helm chart values file: configs.cm, configs.rbac, ...)", path, i+1)
		}
		if o.GetAPIVersion() != "v1" || (o.GetKind() != "ConfigMap" && o.GetKind() != "Secret") {
			return nil, fmt.Errorf("settings %s: %s %s is not a v1 ConfigMap or Secret", path, o.GetKind(), o.GetName())
		}
		s.Objects = append(s.Objects, o)
	}
	return s, inNamespace(path, s.Objects, opts.Namespace)
}

// documents decodes the YAML or JSON documents of a file, skipping empty
// ones.
func documents(path string, b []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []map[string]any
	for i := 0; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("settings %s: document %d: %w", path, i+1, err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
}

// isValues tells a values file from a Kubernetes object: it has neither
// apiVersion nor kind.
func isValues(doc map[string]any) bool {
	_, hasKind := doc["kind"]
	_, hasVersion := doc["apiVersion"]
	return !hasKind && !hasVersion
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
			return fmt.Errorf("settings %s: %s %s is in namespace %q; Argo CD's settings are read in %q",
				path, o.GetKind(), o.GetName(), o.GetNamespace(), ns)
		}
	}
	return nil
}
