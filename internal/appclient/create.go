package appclient

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// DefaultProject is the project of an app created without one.
const DefaultProject = "default"

// Create creates Applications, like `argocd app create`. Apps are
// unstructured so fields wavecd does not model (the CRDs keep them) reach
// the cluster as written.
type Create struct {
	Client *Client
	Apps   []*unstructured.Unstructured
	// Upsert replaces the spec, labels, annotations and finalizers of an
	// existing app that differs; without it such an app is an error.
	Upsert bool
}

// CreateResult says what happened to one app: "created", "updated" or
// "unchanged".
type CreateResult struct {
	Name   string
	Action string
}

// Run creates the apps in order and stops at the first error.
func (a *Create) Run(ctx context.Context) ([]CreateResult, error) {
	var results []CreateResult
	for _, app := range a.Apps {
		app = app.DeepCopy()
		if err := a.prepare(app); err != nil {
			return results, err
		}
		action, err := a.createOne(ctx, app)
		if err != nil {
			return results, err
		}
		results = append(results, CreateResult{Name: app.GetName(), Action: action})
	}
	return results, nil
}

// prepare checks an app and fills in the namespace and the default
// project; status and operation are dropped: a new app has neither.
func (a *Create) prepare(u *unstructured.Unstructured) error {
	gvk := v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind)
	if u.GetKind() != "" && u.GroupVersionKind() != gvk {
		return fmt.Errorf("%s %q is not an %s", u.GetKind(), u.GetName(), gvk)
	}
	u.SetGroupVersionKind(gvk)
	if u.GetName() == "" {
		return errors.New("application has no name: give NAME or metadata.name")
	}
	switch u.GetNamespace() {
	case "":
		u.SetNamespace(a.Client.Namespace)
	case a.Client.Namespace:
	default:
		return fmt.Errorf("application %q declares namespace %q, not %q: pass -n %s", u.GetName(), u.GetNamespace(), a.Client.Namespace, u.GetNamespace())
	}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "operation")
	if p, _, _ := unstructured.NestedString(u.Object, "spec", "project"); p == "" {
		if err := unstructured.SetNestedField(u.Object, DefaultProject, "spec", "project"); err != nil {
			return fmt.Errorf("application %q: %w", u.GetName(), err)
		}
	}
	var app v1alpha1.Application
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &app); err != nil {
		return fmt.Errorf("application %q: %w", u.GetName(), err)
	}
	if len(app.Spec.GetSources()) == 0 {
		return fmt.Errorf("application %q has no source: give --repo (and --path or --helm-chart)", app.Name)
	}
	if app.Spec.Destination.Server == "" && app.Spec.Destination.Name == "" {
		return fmt.Errorf("application %q has no destination cluster: give --dest-server or --dest-name", app.Name)
	}
	return nil
}

func (a *Create) createOne(ctx context.Context, app *unstructured.Unstructured) (string, error) {
	err := a.Client.Kube.Create(ctx, app.DeepCopy())
	if err == nil {
		return "created", nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return "", a.Client.explain(err, app.GetName())
	}
	action := "unchanged"
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(app.GroupVersionKind())
		if err := a.Client.Kube.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
			return a.Client.explain(err, app.GetName())
		}
		if SameDeclaration(live, app) {
			return nil
		}
		if !a.Upsert {
			return fmt.Errorf("application %q in namespace %q exists with a different spec: use --upsert to replace it", app.GetName(), a.Client.Namespace)
		}
		live.Object["spec"] = app.Object["spec"]
		live.SetLabels(app.GetLabels())
		live.SetAnnotations(app.GetAnnotations())
		live.SetFinalizers(app.GetFinalizers())
		if err := a.Client.Kube.Update(ctx, live); err != nil {
			return err
		}
		action = "updated"
		return nil
	})
	return action, err
}

// SameDeclaration compares what `app create` declares: spec, labels,
// annotations and finalizers.
func SameDeclaration(live, want *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(live.Object["spec"], want.Object["spec"]) &&
		equality.Semantic.DeepEqual(live.GetLabels(), want.GetLabels()) &&
		equality.Semantic.DeepEqual(live.GetAnnotations(), want.GetAnnotations()) &&
		equality.Semantic.DeepEqual(live.GetFinalizers(), want.GetFinalizers())
}

// Set changes an app's spec from AppOptions, like `argocd app set`.
type Set struct {
	Client  *Client
	Name    string
	Options AppOptions
}

// Run patches the app and returns it as written.
func (a *Set) Run(ctx context.Context) (*v1alpha1.Application, error) {
	if a.Options.IsZero() {
		return nil, errors.New("set at least one option to change")
	}
	var written *v1alpha1.Application
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := a.Client.Get(ctx, a.Name)
		if err != nil {
			return err
		}
		orig := app.DeepCopy()
		if err := a.Options.Apply(&app.Spec); err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
		if err := a.Client.Kube.Patch(ctx, app, patch); err != nil {
			return err
		}
		written = app
		return nil
	})
	if err != nil {
		return nil, err
	}
	setTypeMeta(written)
	return written, nil
}
