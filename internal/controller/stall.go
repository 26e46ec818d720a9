package controller

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/hook"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// nodePoolKinds are the kinds whose presence among an app's objects makes
// it a node provisioner's app.
var nodePoolKinds = map[schema.GroupKind]bool{
	{Group: "karpenter.sh", Kind: "NodePool"}: true,
}

// parseStallTimeout reads wavecd.stall.timeout; the controller option wins.
func (s *Settings) parseStallTimeout(data map[string]string, opts Options) error {
	s.StallTimeout = wsync.DefaultStallTimeout
	if v := strings.TrimSpace(data[keyStallTimeout]); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			return fmt.Errorf("argocd-cm key %s: %w", keyStallTimeout, err)
		}
		s.StallTimeout = d
	}
	if opts.StallTimeout != 0 {
		s.StallTimeout = opts.StallTimeout
	}
	return nil
}

// markStalled sets the SyncStalled condition while the running sync's step
// is stalled, with the operation's message, and clears it otherwise.
func markStalled(status *v1alpha1.ApplicationStatus, st *wsync.State, now time.Time) {
	if st.Stalled == "" || st.Phase.Completed() {
		clearCondition(status, v1alpha1.ApplicationConditionSyncStalled)
		return
	}
	setCondition(status, v1alpha1.ApplicationConditionSyncStalled, "stalled: "+st.Stalled, now)
}

// provisionerCandidate is an Application that may deploy a node
// provisioner: one that exists, or one a parent's manifests hold and the
// parent has not created yet (then objects are its rendered manifests).
type provisionerCandidate struct {
	app     *v1alpha1.Application
	parent  string
	created bool
	objects []*unstructured.Unstructured
}

// nodeProvisioners finds the apps that deploy a node provisioner, for a
// stall whose pods cannot be scheduled. Child Applications that a parent
// wants but has not created yet are found in the parent's manifests and
// rendered, so a provisioner in a later wave is named before it exists.
func (r *Reconciler) nodeProvisioners(ctx context.Context) ([]wsync.NodeProvisioner, error) {
	list := &v1alpha1.ApplicationList{}
	if err := r.client.List(ctx, list, client.InNamespace(r.opts.Namespace)); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	existing := map[string]bool{}
	var cands []provisionerCandidate
	for i := range list.Items {
		a := &list.Items[i]
		existing[a.Name] = true
		cands = append(cands, provisionerCandidate{app: a, parent: r.trackingOwner(a.Annotations, a.Labels), created: true})
	}
	for i := range list.Items {
		if parent := &list.Items[i]; missingChildren(parent, existing) {
			cands = append(cands, r.uncreatedChildren(ctx, parent, existing)...)
		}
	}
	return nodeProvisionersOf(cands), nil
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
// that does not exist yet. What fails to render is left out: the
// explanation is best effort.
func (r *Reconciler) uncreatedChildren(ctx context.Context, parent *v1alpha1.Application, existing map[string]bool) []provisionerCandidate {
	res, err := r.renderApp(ctx, r.targets.local, parent, renderOptions{})
	if err != nil {
		logctx.From(ctx).Debug("render parent for node provisioners", "app", parent.Name, "err", err)
		return nil
	}
	var out []provisionerCandidate
	for _, o := range res.Objects {
		if o.GroupVersionKind().GroupKind() != applicationGK || existing[o.GetName()] {
			continue
		}
		child := &v1alpha1.Application{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, child); err != nil {
			continue
		}
		c := provisionerCandidate{app: child, parent: parent.Name}
		if !isMarkedProvisioner(child.Annotations) {
			if rendered, err := r.renderApp(ctx, r.targets.local, child, renderOptions{}); err == nil {
				c.objects = rendered.Objects
			}
		}
		out = append(out, c)
	}
	return out
}

// nodeProvisionersOf picks the candidates that deploy a node provisioner:
// annotated wavecd.io/node-provisioner: "true" (the Application or one of
// its objects), or holding a node pool kind such as Karpenter's NodePool.
func nodeProvisionersOf(cands []provisionerCandidate) []wsync.NodeProvisioner {
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

func isProvisioner(c provisionerCandidate) bool {
	if isMarkedProvisioner(c.app.Annotations) {
		return true
	}
	for _, res := range c.app.Status.Resources {
		if nodePoolKinds[schema.GroupKind{Group: res.Group, Kind: res.Kind}] {
			return true
		}
	}
	for _, o := range c.objects {
		if nodePoolKinds[o.GroupVersionKind().GroupKind()] || isMarkedProvisioner(o.GetAnnotations()) {
			return true
		}
	}
	return false
}

func isMarkedProvisioner(annotations map[string]string) bool {
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
	return how + truncate(msg, maxFailureMessage)
}

// maxFailureMessage is how much of a failed sync's message a stall
// explanation quotes: 200 bytes, then "...".
const maxFailureMessage = 203
