package provisioner

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// nodePoolKinds are the kinds whose presence among an app's objects makes
// it a node provisioner's app.
var nodePoolKinds = map[schema.GroupKind]bool{
	{Group: "karpenter.sh", Kind: "NodePool"}: true,
}

var applicationGK = schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.ApplicationKind}

// Finder finds the node provisioners among the Applications of a
// namespace; its Find is a wsync.NodeProvisionerFinder.
type Finder struct {
	// Apps lists the Applications of Namespace.
	Apps      client.Reader
	Namespace string
	// Parent names the app that tracks an Application (its parent in app
	// of apps), "" for none.
	Parent func(annotations, labels map[string]string) string
	// Render renders an app's manifests at the local destination.
	Render func(ctx context.Context, app *v1alpha1.Application) ([]*unstructured.Unstructured, error)
}

// candidate is an Application that may deploy a node provisioner: one
// that exists, or one a parent's manifests hold and the parent has not
// created yet (then objects are its rendered manifests).
type candidate struct {
	app     *v1alpha1.Application
	parent  string
	created bool
	objects []*unstructured.Unstructured
}

// Find returns the apps that deploy a node provisioner. Child Applications
// that a parent wants but has not created yet are found in the parent's
// manifests and rendered; what fails to render is left out, as the
// explanation is best effort.
func (f Finder) Find(ctx context.Context) ([]wsync.NodeProvisioner, error) {
	list := &v1alpha1.ApplicationList{}
	if err := f.Apps.List(ctx, list, client.InNamespace(f.Namespace)); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	existing := map[string]bool{}
	var cands []candidate
	for i := range list.Items {
		a := &list.Items[i]
		existing[a.Name] = true
		cands = append(cands, candidate{app: a, parent: f.Parent(a.Annotations, a.Labels), created: true})
	}
	for i := range list.Items {
		if parent := &list.Items[i]; missingChildren(parent, existing) {
			cands = append(cands, f.uncreatedChildren(ctx, parent, existing)...)
		}
	}
	return provisionersOf(cands), nil
}

// missingChildren reports whether app's resources list a child
// Application that does not exist.
func missingChildren(app *v1alpha1.Application, existing map[string]bool) bool {
	for _, res := range app.Status.Resources {
		if res.Group == v1alpha1.Group && res.Kind == v1alpha1.ApplicationKind && !existing[res.Name] {
			return true
		}
	}
	return false
}

// uncreatedChildren renders parent and each child Application it holds
// that does not exist yet.
func (f Finder) uncreatedChildren(ctx context.Context, parent *v1alpha1.Application, existing map[string]bool) []candidate {
	objs, err := f.Render(ctx, parent)
	if err != nil {
		logctx.From(ctx).Debug("render parent for node provisioners", "app", parent.Name, "err", err)
		return nil
	}
	var out []candidate
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != applicationGK || existing[o.GetName()] {
			continue
		}
		child := &v1alpha1.Application{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, child); err != nil {
			continue
		}
		c := candidate{app: child, parent: parent.Name}
		if !isMarked(child.Annotations) {
			if rendered, err := f.Render(ctx, child); err == nil {
				c.objects = rendered
			}
		}
		out = append(out, c)
	}
	return out
}

// provisionersOf picks the candidates that deploy a node provisioner:
// annotated wavecd.io/node-provisioner: "true" (the Application or one of
// its objects), or holding a node pool kind such as Karpenter's NodePool.
func provisionersOf(cands []candidate) []wsync.NodeProvisioner {
	var out []wsync.NodeProvisioner
	for _, c := range cands {
		if !isProvisioner(c) {
			continue
		}
		p := wsync.NodeProvisioner{App: c.app.Name, Parent: c.parent, Wave: hook.Wave(c.app)}
		if c.created {
			p.Running = runsWorkload(c.app)
			p.Problem = syncProblem(c.app)
		}
		out = append(out, p)
	}
	return out
}

func isProvisioner(c candidate) bool {
	if isMarked(c.app.Annotations) {
		return true
	}
	for _, res := range c.app.Status.Resources {
		if nodePoolKinds[schema.GroupKind{Group: res.Group, Kind: res.Kind}] {
			return true
		}
	}
	for _, o := range c.objects {
		if nodePoolKinds[o.GroupVersionKind().GroupKind()] || isMarked(o.GetAnnotations()) {
			return true
		}
	}
	return false
}

func isMarked(annotations map[string]string) bool {
	return annotations[wsync.AnnotationNodeProvisioner] == "true"
}

// runsWorkload reports whether one of the app's Deployments or
// StatefulSets is Healthy: its provisioner runs.
func runsWorkload(app *v1alpha1.Application) bool {
	for _, res := range app.Status.Resources {
		if res.Group == "apps" && (res.Kind == "Deployment" || res.Kind == "StatefulSet") &&
			res.Health != nil && res.Health.Status == "Healthy" {
			return true
		}
	}
	return false
}

// retryPrefix starts the message of a sync waiting to be retried.
var retryPrefix = regexp.MustCompile(`^Retrying attempt #\d+ at [0-9:]+: `)

// syncProblem says why the app's provisioner may not run: its last sync
// failed, or failed and waits to be retried.
func syncProblem(app *v1alpha1.Application) string {
	op := app.Status.OperationState
	if op == nil {
		return ""
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(op.Message), "\n")
	how := "its last sync failed: "
	switch {
	case op.Phase == v1alpha1.OperationRunning && retryPrefix.MatchString(msg):
		how, msg = "its sync failed and is retried: ", retryPrefix.ReplaceAllString(msg, "")
	case op.Phase != v1alpha1.OperationFailed && op.Phase != v1alpha1.OperationError:
		return ""
	}
	return how + application.Truncate(msg, maxFailureMessage)
}

// maxFailureMessage is how much of a failed sync's message a stall
// explanation quotes: 200 bytes, then "...".
const maxFailureMessage = 203
