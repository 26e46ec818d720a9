package appset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/source"
)

// AnnotationRefresh set to "true" on an ApplicationSet makes it read its
// generators' sources again at once; the controller removes it.
const AnnotationRefresh = "argocd.argoproj.io/application-set-refresh"

// Reconciler reconciles one ApplicationSet per call.
type Reconciler struct {
	// client reads from the controller's cache and writes to the API server.
	client client.Client
	// apiReader reads from the API server.
	apiReader client.Reader
	// resources lists the cluster-decision-resource generators' resources.
	resources Resources
	// apps reads the namespace's Applications: the controller's own
	// cache, or the one Options.Apps shares.
	apps     client.Reader
	scheme   *runtime.Scheme
	repos    *source.Repos
	clusters cluster.Registry
	opts     Options
	results  *resultCache
	failures *failureCounter
	now      func() time.Time
	// credentials are the namespace's repository Secrets.
	credentials *source.SecretCredentials
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconcile generates one set's Applications and brings the cluster and
// the set's status in line with them.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx = logctx.With(ctx, slog.With("applicationset", req.Name))
	// Read from the API server: the status patch is computed against this
	// copy, and a stale one would undo a newer change.
	set := &v1alpha1.ApplicationSet{}
	if err := r.apiReader.Get(ctx, req.NamespacedName, set); err != nil {
		if apierrors.IsNotFound(err) {
			r.results.forget(req.Name)
			r.failures.reset(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("read applicationset: %w", err)
	}
	if set.DeletionTimestamp != nil {
		return reconcile.Result{}, r.finalize(ctx, set)
	}
	return r.reconcileSet(ctx, set)
}

// reconcileSet is Reconcile for a set that exists.
func (r *Reconciler) reconcileSet(ctx context.Context, set *v1alpha1.ApplicationSet) (reconcile.Result, error) {
	base := set.DeepCopy()
	// Read before the status patch, which refreshes set from the server:
	// a refresh asked for after this read is for the next reconcile.
	_, refresh := set.Annotations[AnnotationRefresh]
	owned, err := r.ownedApps(ctx, set)
	if err != nil {
		return reconcile.Result{}, err
	}
	set.Status.Resources = resourceStatuses(owned)
	gen, err := r.generate(ctx, set)
	if err == nil {
		err = checkPolicy(set)
	}
	if err != nil {
		setConditions(set, outcome{reason: reasonOf(err), message: err.Error()}, r.now())
		if perr := r.patchStatus(ctx, base, set); perr != nil {
			return reconcile.Result{}, perr
		}
		delay := r.failures.next(set.Name)
		logctx.From(ctx).Warn("applications not generated; nothing created, updated or deleted", "err", err, "retryIn", delay)
		return reconcile.Result{RequeueAfter: delay}, nil
	}
	desired := make([]v1alpha1.Application, len(gen.Apps))
	for i := range gen.Apps {
		gen.Apps[i].DeepCopyInto(&desired[i])
	}
	res := r.syncApps(ctx, set, desired, owned)
	setConditions(set, res, r.now())
	if err := r.patchStatus(ctx, base, set); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.clearRefresh(ctx, set, refresh); err != nil {
		return reconcile.Result{}, err
	}
	if res.reason != "" && res.reason != v1alpha1.ApplicationSetReasonApplicationValidationError {
		return reconcile.Result{RequeueAfter: r.failures.next(set.Name)}, nil
	}
	r.failures.reset(set.Name)
	return reconcile.Result{RequeueAfter: r.results.remaining(set.Name, r.now())}, nil
}

// syncApps validates the generated apps, plans the rollout, and applies
// and deletes apps as the set's policy allows. The outcome is the first
// problem, for the conditions.
func (r *Reconciler) syncApps(ctx context.Context, set *v1alpha1.ApplicationSet, desired []v1alpha1.Application, owned []v1alpha1.Application) outcome {
	res := outcome{paramsGenerated: true}
	valid, problems := r.validate(ctx, set, desired)
	if len(problems) > 0 {
		msg := problems[len(problems)-1]
		if len(problems) > 1 {
			msg = fmt.Sprintf("%s (and %d more)", msg, len(problems)-1)
		}
		res.reason, res.message = v1alpha1.ApplicationSetReasonApplicationValidationError, msg
		logctx.From(ctx).Warn("invalid generated applications are left as they are", "problems", problems)
	}
	if isRollingSync(set) {
		plan := planRollout(set, owned, desired, r.now())
		set.Status.ApplicationStatus = plan.statuses
		valid = plan.apply(valid)
	} else {
		set.Status.ApplicationStatus = nil
	}
	if err := r.applyApps(ctx, set, valid, owned); err != nil && res.reason == "" {
		res.reason, res.message = reasonOfApply(err), err.Error()
	}
	if err := r.deleteStale(ctx, set, desired, owned); err != nil && res.reason == "" {
		res.reason, res.message = v1alpha1.ApplicationSetReasonDeleteApplicationError, err.Error()
	}
	return res
}

// generate returns the set's generated apps, from the result cache when
// nothing they depend on changed.
func (r *Reconciler) generate(ctx context.Context, set *v1alpha1.ApplicationSet) (*Generated, error) {
	now := r.now()
	if set.Annotations[AnnotationRefresh] != "true" {
		if g, ok := r.results.get(set, now); ok {
			return g, nil
		}
	}
	epoch := r.results.epoch()
	r.refreshCredentials(ctx)
	g, err := Generate(ctx, set, Inputs{
		Repos: r.repos, Clusters: r.clusters, NewGitFileGlobbing: r.opts.NewGitFileGlobbing, GitRequeue: r.opts.GitRequeue,
		Objects: KubeObjects{Reader: r.apiReader}, Resources: r.resources, SCM: r.opts.SCM,
	})
	if err != nil {
		r.results.forget(set.Name)
		return nil, err
	}
	logctx.From(ctx).Debug("generated applications", "count", len(g.Apps))
	r.results.put(set, epoch, now, g)
	return g, nil
}

func reasonOf(err error) string {
	var ge *GenerateError
	if errors.As(err, &ge) {
		return ge.Reason
	}
	return v1alpha1.ApplicationSetReasonErrorOccurred
}

// ownedApps lists the apps the set controls, by name.
func (r *Reconciler) ownedApps(ctx context.Context, set *v1alpha1.ApplicationSet) ([]v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := r.apps.List(ctx, list, client.InNamespace(set.Namespace), client.MatchingFields{ownerIndex: set.Name}); err != nil {
		return nil, fmt.Errorf("list the set's applications: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.Application) int { return cmp.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// clearRefresh removes the refresh annotation once the set was generated
// from fresh sources, which refreshed says: the annotation the set carries
// now may have been added after this reconcile generated its apps.
func (r *Reconciler) clearRefresh(ctx context.Context, set *v1alpha1.ApplicationSet, refreshed bool) error {
	if !refreshed {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, AnnotationRefresh)
	target := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: set.Namespace, Name: set.Name}}
	if err := r.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("remove annotation %s: %w", AnnotationRefresh, err))
	}
	return nil
}

// refreshCredentials hands the repository Secrets of the namespace to the
// repository cache when they are due to be read again.
func (r *Reconciler) refreshCredentials(ctx context.Context) {
	creds, fresh, err := r.credentials.Due(ctx)
	if err != nil {
		logctx.From(ctx).Warn("repository secrets", "err", err)
	}
	if fresh {
		r.repos.SetCredentials(creds)
	}
}
