package appclient

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// DefaultNamespace is where Applications live unless told otherwise.
const DefaultNamespace = "argocd"

// Client reads and writes the Applications of one namespace.
type Client struct {
	// Kube is the Kubernetes client; it must be able to watch for Wait.
	Kube client.WithWatch
	// Namespace holds the Applications.
	Namespace string
	// Username is recorded as operation.initiatedBy.username.
	Username string
}

// New builds a Client for cfg.
func New(cfg *rest.Config, namespace, username string) (*Client, error) {
	s, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connect to the Kubernetes API: %w", err)
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	return &Client{Kube: c, Namespace: namespace, Username: username}, nil
}

// Get reads one Application; a missing one is an *application.NotFoundError.
func (c *Client) Get(ctx context.Context, name string) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	err := c.Kube.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, app)
	if err != nil {
		return nil, c.explain(err, name)
	}
	setTypeMeta(app)
	return app, nil
}

// GetRaw reads one Application as stored, with the fields these types do
// not model; a missing one is an *application.NotFoundError.
func (c *Client) GetRaw(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
	if err := c.Kube.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, u); err != nil {
		return nil, c.explain(err, name)
	}
	return u, nil
}

// list reads the Applications of the namespace matching opts, typed and
// as stored (same order).
func (c *Client) list(ctx context.Context, opts ...client.ListOption) ([]v1alpha1.Application, []*unstructured.Unstructured, error) {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind + "List"))
	opts = append(opts, client.InNamespace(c.Namespace))
	if err := c.Kube.List(ctx, &list, opts...); err != nil {
		return nil, nil, c.explain(err, "")
	}
	apps := make([]v1alpha1.Application, len(list.Items))
	raw := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		raw[i] = &list.Items[i]
		app, err := decode(raw[i])
		if err != nil {
			return nil, nil, err
		}
		apps[i] = *app
	}
	return apps, raw, nil
}

// decode converts an Application as stored into the typed one.
func decode(u *unstructured.Unstructured) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, app); err != nil {
		return nil, fmt.Errorf("decode application %q: %w", u.GetName(), err)
	}
	setTypeMeta(app)
	return app, nil
}

// explain turns API errors into messages that name the app, the namespace
// or the missing CRD.
func (c *Client) explain(err error, name string) error {
	switch {
	case apierrors.IsNotFound(err) && name != "":
		return &application.NotFoundError{Name: name, Namespace: c.Namespace}
	case meta.IsNoMatchError(err):
		return fmt.Errorf("the Application CRD (applications.argoproj.io) is not installed in this cluster: %w", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed in namespace %q: %w", c.Namespace, err)
	}
	if name != "" {
		return fmt.Errorf("application %q in namespace %q: %w", name, c.Namespace, err)
	}
	return fmt.Errorf("applications in namespace %q: %w", c.Namespace, err)
}

func setTypeMeta(app *v1alpha1.Application) {
	app.APIVersion = v1alpha1.SchemeGroupVersion.String()
	app.Kind = v1alpha1.ApplicationKind
}
