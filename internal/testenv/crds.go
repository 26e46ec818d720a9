package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

var (
	crdsOnce stdsync.Once
	crdsErr  error
)

// InstallCRDs applies Argo CD's CRDs (Application, ApplicationSet,
// AppProject, from api/v1alpha1/crds) to the package's cluster once and
// fails the test when that fails.
func (e *Env) InstallCRDs(t testing.TB) {
	t.Helper()
	crdsOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			crdsErr = err
			return
		}
		crdsErr = e.ApplyCRDs(context.Background(), filepath.Join(root, "api", "v1alpha1", "crds"))
	})
	if crdsErr != nil {
		t.Fatalf("install CRDs: %v", crdsErr)
	}
}

// crdGVR is where CRDs are served.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyCRDs applies every CRD of the YAML files in dir (server-side, so
// applying them again changes nothing) and waits until the API server
// serves each. A dir without one is an error.
func (e *Env) ApplyCRDs(ctx context.Context, dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		return fmt.Errorf("no CRDs in %s: %w", dir, err)
	}
	var names []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &obj.Object); err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		if _, err := e.Dynamic.Resource(crdGVR).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "wavecd-tests", Force: true}); err != nil {
			return fmt.Errorf("apply %s: %w", p, err)
		}
		names = append(names, obj.GetName())
	}
	return e.WaitEstablished(ctx, names, time.Minute)
}

// WaitEstablished waits until the API server serves each CRD named.
func (e *Env) WaitEstablished(ctx context.Context, names []string, timeout time.Duration) error {
	c, err := apiextensions.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for _, name := range names {
		for {
			crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established within %s (%w)", name, timeout, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// AppClient returns a client of the package's cluster that knows the core
// and argoproj.io types, reading straight from the API server.
func (e *Env) AppClient(t testing.TB) client.Client {
	t.Helper()
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(e.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// CRD defines kind (plural: its lower case and "s") of group, namespaced,
// served and stored at v1 with schema as its openAPIV3Schema; nil schema
// keeps every field.
func CRD(group, kind string, schema map[string]any) *unstructured.Unstructured {
	if schema == nil {
		schema = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	plural := strings.ToLower(kind) + "s"
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema}}},
		},
	}}
}
