package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// FieldManager is the server-side apply field manager of installs.
const FieldManager = "wavecd"

// ManagedByLabel marks the CRDs wavecd installed.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// CRDAction says what InstallCRDs did with one CRD.
type CRDAction string

// CRD actions.
const (
	CRDApplied     CRDAction = "applied"
	CRDKeptForeign CRDAction = "kept (installed by Argo CD)"
)

// CRDResult is the outcome for one CRD.
type CRDResult struct {
	Name   string    `json:"name"`
	Action CRDAction `json:"action"`
}

// CRDOptions configure InstallCRDs.
type CRDOptions struct {
	// Timeout bounds the wait for each CRD to be Established.
	Timeout time.Duration
}

// BundledCRDs decodes the CRDs embedded in the api package, by name.
func BundledCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(v1alpha1.CRDs, "crds/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list bundled CRDs: %w", err)
	}
	sort.Strings(names)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, n := range names {
		b, err := v1alpha1.CRDs.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", n, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", n, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// InstallCRDs applies the bundled CRDs and waits until each is
// Established. A CRD of the same name that Argo CD installed (it lacks our
// managed-by label and carries Argo CD's part-of label) is used as it is.
func InstallCRDs(ctx context.Context, c apiextensions.Interface, o CRDOptions) ([]CRDResult, error) {
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	crds, err := BundledCRDs()
	if err != nil {
		return nil, err
	}
	results := make([]CRDResult, 0, len(crds))
	for _, crd := range crds {
		action, err := installCRD(ctx, c, crd)
		if err != nil {
			return results, err
		}
		if err := waitEstablished(ctx, c, crd.Name, o.Timeout); err != nil {
			return results, err
		}
		results = append(results, CRDResult{Name: crd.Name, Action: action})
	}
	return results, nil
}

func installCRD(ctx context.Context, c apiextensions.Interface, crd *apiextensionsv1.CustomResourceDefinition) (CRDAction, error) {
	live, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	switch {
	case err == nil && isArgoCDs(live):
		return CRDKeptForeign, nil
	case err != nil && !apierrors.IsNotFound(err):
		return "", fmt.Errorf("read CRD %s: %w", crd.Name, err)
	}
	crd = crd.DeepCopy()
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	crd.Labels[ManagedByLabel] = "wavecd"
	body, err := json.Marshal(crd)
	if err != nil {
		return "", fmt.Errorf("encode CRD %s: %w", crd.Name, err)
	}
	force := true
	_, err = c.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
	if err != nil {
		return "", fmt.Errorf("apply CRD %s: %w", crd.Name, err)
	}
	return CRDApplied, nil
}

// isArgoCDs reports whether a live CRD belongs to an Argo CD installation.
func isArgoCDs(crd *apiextensionsv1.CustomResourceDefinition) bool {
	if crd.Labels[ManagedByLabel] == "wavecd" {
		return false
	}
	return crd.Labels["app.kubernetes.io/part-of"] == "argocd"
}

func waitEstablished(ctx context.Context, c apiextensions.Interface, name string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // transient: keep polling until the timeout
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not Established within %s: %w", name, timeout, err)
	}
	return nil
}
