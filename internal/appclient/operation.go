package appclient

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/glob"
)

// OperationInProgressError says an app already has an operation.
type OperationInProgressError struct {
	Name, Namespace string
}

func (e *OperationInProgressError) Error() string {
	return fmt.Sprintf("application %q in namespace %q: another operation is already in progress", e.Name, e.Namespace)
}

// buildOperation makes the operation for the current app, or refuses.
type buildOperation func(app *v1alpha1.Application) (*v1alpha1.Operation, error)

// setOperation writes the operation build returns into the app's
// `operation` field and clears status.operationState, as Argo CD's API
// server does, retrying on conflicts. It refuses when the app is being
// deleted or already has an operation.
func (c *Client) setOperation(ctx context.Context, name string, build buildOperation) (*v1alpha1.Application, error) {
	var written *v1alpha1.Application
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := c.Get(ctx, name)
		if err != nil {
			return err
		}
		if app.DeletionTimestamp != nil {
			return fmt.Errorf("application %q in namespace %q is being deleted", name, c.Namespace)
		}
		if app.Operation != nil {
			return &OperationInProgressError{Name: name, Namespace: c.Namespace}
		}
		op, err := build(app)
		if err != nil {
			return err
		}
		// A patch, not an update: the CRD keeps fields these types do not
		// model, and an update from a typed object would drop them.
		orig := app.DeepCopy()
		app.Operation = op
		app.Status.OperationState = nil
		if err := c.Kube.Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		setTypeMeta(app)
		written = app
		return nil
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// ParseResource parses a --resource value: GROUP:KIND:NAME or
// GROUP:KIND:NAMESPACE/NAME. GROUP is empty for core kinds; any field may be
// a glob such as `*`.
func ParseResource(s string) (v1alpha1.SyncOperationResource, error) {
	badValue := fmt.Errorf("invalid resource %q: want GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (GROUP empty for core kinds, e.g. :Service:web)", s)
	fields := strings.Split(s, ":")
	if len(fields) != 3 || fields[1] == "" || fields[2] == "" {
		return v1alpha1.SyncOperationResource{}, badValue
	}
	r := v1alpha1.SyncOperationResource{Group: fields[0], Kind: fields[1], Name: fields[2]}
	if ns, name, ok := strings.Cut(fields[2], "/"); ok {
		if ns == "" || name == "" || strings.Contains(name, "/") {
			return v1alpha1.SyncOperationResource{}, badValue
		}
		r.Namespace, r.Name = ns, name
	}
	if f, bad := badPattern(r); bad {
		return v1alpha1.SyncOperationResource{}, fmt.Errorf("%w: bad pattern %q", badValue, f)
	}
	return r, nil
}

// checkResource refuses a resource pattern without a kind or a name, or
// with a field that is not a valid glob.
func checkResource(r v1alpha1.SyncOperationResource) error {
	if r.Kind == "" || r.Name == "" {
		return fmt.Errorf("invalid resource %s: a kind and a name are required", formatResource(r))
	}
	if f, bad := badPattern(r); bad {
		return fmt.Errorf("invalid resource %s: bad pattern %q", formatResource(r), f)
	}
	return nil
}

// badPattern returns the first field of r that is not a valid glob.
func badPattern(r v1alpha1.SyncOperationResource) (string, bool) {
	for _, f := range []string{r.Group, r.Kind, r.Namespace, r.Name} {
		if glob.Valid(f) != nil {
			return f, true
		}
	}
	return "", false
}

// formatResource spells a resource pattern as --resource does.
func formatResource(r v1alpha1.SyncOperationResource) string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return r.Group + ":" + r.Kind + ":" + name
}

func formatResources(rs []v1alpha1.SyncOperationResource) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = formatResource(r)
	}
	return strings.Join(out, ", ")
}

// selectResources expands patterns into the app's objects they match, in
// status.resources order, as `argocd app sync --resource` does.
func selectResources(app *v1alpha1.Application, patterns []v1alpha1.SyncOperationResource) []v1alpha1.SyncOperationResource {
	var out []v1alpha1.SyncOperationResource
	for _, r := range app.Status.Resources {
		for _, p := range patterns {
			if glob.Match(p.Group, r.Group) && glob.Match(p.Kind, r.Kind) && glob.Match(p.Name, r.Name) &&
				(p.Namespace == "" || glob.Match(p.Namespace, r.Namespace)) {
				out = append(out, v1alpha1.SyncOperationResource{Group: r.Group, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace})
				break
			}
		}
	}
	return out
}

// operationMatches reports whether observed (status.operationState.operation)
// is the operation this client wrote. The controller copies the operation
// into its state and may resolve the revision, so an empty written
// revision matches any.
func operationMatches(written, observed *v1alpha1.Operation) bool {
	if written == nil || observed == nil || written.Sync == nil || observed.Sync == nil {
		return false
	}
	w, o := written.Sync, observed.Sync
	if w.Revision != "" && w.Revision != o.Revision {
		return false
	}
	return written.InitiatedBy.Username == observed.InitiatedBy.Username &&
		w.Prune == o.Prune && w.DryRun == o.DryRun &&
		equality.Semantic.DeepEqual(w.Resources, o.Resources) &&
		equality.Semantic.DeepEqual(w.Source, o.Source)
}
