package hydrate

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/source"
)

// argocd-cm keys of the hydrator, Argo CD's, and their defaults.
const (
	KeyCommitMessageTemplate = "sourceHydrator.commitMessageTemplate"
	KeyReadmeMessageTemplate = "sourceHydrator.readmeMessageTemplate"
	KeyAuthorName            = "commit.author.name"
	KeyAuthorEmail           = "commit.author.email"
	defaultAuthorName        = "Argo CD"
	defaultAuthorEmail       = "argo-cd@example.com"
)

// RetryAfter is how long a failed hydration waits before it is tried
// again on its own; a hydrate annotation or a refresh tries at once.
const RetryAfter = 2 * time.Minute

// Settings are argocd-cm's hydrator keys.
type Settings struct {
	AuthorName, AuthorEmail                      string
	CommitMessageTemplate, ReadmeMessageTemplate string
}

// SettingsFrom reads the hydrator keys of argocd-cm's data.
func SettingsFrom(data map[string]string) Settings {
	return Settings{
		AuthorName:            cmp.Or(strings.TrimSpace(data[KeyAuthorName]), defaultAuthorName),
		AuthorEmail:           cmp.Or(strings.TrimSpace(data[KeyAuthorEmail]), defaultAuthorEmail),
		CommitMessageTemplate: data[KeyCommitMessageTemplate],
		ReadmeMessageTemplate: data[KeyReadmeMessageTemplate],
	}
}

// Renderer renders an app whose only source is the dry source and
// returns its objects and the dry commit it rendered.
type Renderer func(ctx context.Context, dry *v1alpha1.Application) ([]*unstructured.Unstructured, string, error)

// Request is one app's hydration.
type Request struct {
	Render   Renderer
	Settings Settings
	// Group lists the other apps of the app's group (see GroupKey),
	// hydrated into the same commit; it is called only when a hydration
	// runs. Nil: none.
	Group func(ctx context.Context) ([]*v1alpha1.Application, error)
}

// GroupKey is what the apps hydrated into one commit share, as in Argo
// CD: the dry repository and revision (as written), and the repository
// and branch hydrated to.
func GroupKey(spec *v1alpha1.SourceHydrator) string {
	return strings.Join([]string{source.NormalizeURL(spec.DrySource.RepoURL), spec.DrySource.TargetRevision,
		source.NormalizeURL(syncRepo(spec)), targetBranch(spec)}, "\x00")
}

// sameDestination reports whether two hydrators write the same folder of
// the same repository (paths compared as written, as Argo CD does).
func sameDestination(a, b *v1alpha1.SourceHydrator) bool {
	return source.NormalizeURL(syncRepo(a)) == source.NormalizeURL(syncRepo(b)) && a.SyncSource.Path == b.SyncSource.Path
}

// Hydrator hydrates apps into the repositories of Repos. Hydrations of
// one group run one at a time, as Argo CD's commit server runs them.
type Hydrator struct {
	Repos *source.Repos
	// WriteCredentials returns the repository-write and repo-write-creds
	// credentials (nil: none): a push uses the hydrated repository's,
	// else its read credentials.
	WriteCredentials func(ctx context.Context) (source.Credentials, error)
	// Now defaults to time.Now.
	Now func() time.Time

	locks sync.Map // group key -> *sync.Mutex
}

// lock holds the group of spec until the returned func is called.
func (h *Hydrator) lock(spec *v1alpha1.SourceHydrator) func() {
	m, _ := h.locks.LoadOrStore(GroupKey(spec), &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Result is what Run did.
type Result struct {
	// Hydrated: a hydration ran and succeeded; the sync source is to be
	// read again.
	Hydrated bool
	// Committed: the hydration pushed a commit, which may hold the
	// manifests of Group, the other apps of the group, too.
	Committed bool
	Group     []*v1alpha1.Application
	// Wait is when to look again, for a failed hydration waiting to be
	// retried.
	Wait time.Duration
}

// Run hydrates app when that is due, and puts the outcome into its
// status.sourceHydrator; the hydrate annotation is answered either way.
// A hydration that fails is the status's Failed phase with Argo CD's
// message, not an error: nothing is pushed and the sync source stays as it
// was.
func (h *Hydrator) Run(ctx context.Context, app *v1alpha1.Application, req Request) Result {
	now := h.now()
	due, why, wait := h.due(ctx, app, now)
	delete(app.Annotations, v1alpha1.AnnotationHydrate)
	if !due {
		return Result{Wait: wait}
	}
	logctx.From(ctx).Info("hydrating", "reason", why)
	st := ensureStatus(app)
	op := &v1alpha1.HydrateOperation{StartedAt: metav1.NewTime(now), Phase: v1alpha1.HydrateOperationPhaseHydrating, SourceHydrator: *app.Spec.SourceHydrator.DeepCopy()}
	st.CurrentOperation = op
	unlock := h.lock(app.Spec.SourceHydrator)
	out, err := h.hydrate(ctx, app, req)
	unlock()
	done := metav1.NewTime(h.now())
	op.FinishedAt, op.DrySHA = &done, out.drySHA
	if out.drySHA != "" {
		st.LastComparedDryRevision = out.drySHA
	}
	if err != nil {
		op.Phase, op.Message = v1alpha1.HydrateOperationPhaseFailed, "Failed to hydrate: "+err.Error()
		logctx.From(ctx).Warn("hydration failed", "err", err)
		return Result{Wait: RetryAfter}
	}
	op.Phase, op.HydratedSHA = v1alpha1.HydrateOperationPhaseHydrated, out.hydratedSHA
	st.LastSuccessfulOperation = &v1alpha1.SuccessfulHydrateOperation{DrySHA: out.drySHA, HydratedSHA: out.hydratedSHA, SourceHydrator: op.SourceHydrator}
	logctx.From(ctx).Info("hydrated", "drySHA", out.drySHA, "hydratedSHA", out.hydratedSHA, "committed", out.committed)
	return Result{Hydrated: true, Committed: out.committed, Group: out.group}
}

func ensureStatus(app *v1alpha1.Application) *v1alpha1.SourceHydratorStatus {
	if app.Status.SourceHydrator == nil {
		app.Status.SourceHydrator = &v1alpha1.SourceHydratorStatus{}
	}
	return app.Status.SourceHydrator
}

func (h *Hydrator) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// revisionReuse is how old the dry repository's refs may be when nobody
// asked for a hydration: apps of one repository share one listing.
const revisionReuse = 10 * time.Second

// due decides, in Argo CD's order, whether to hydrate now and why; a
// failed hydration not due yet returns the wait until its retry.
func (h *Hydrator) due(ctx context.Context, app *v1alpha1.Application, now time.Time) (bool, string, time.Duration) {
	spec := app.Spec.SourceHydrator
	kind, asked := app.Annotations[v1alpha1.AnnotationHydrate]
	var cur *v1alpha1.HydrateOperation
	if st := app.Status.SourceHydrator; st != nil {
		cur = st.CurrentOperation
	}
	switch {
	case cur == nil:
		return true, "no previous hydrate operation", 0
	case kind == "hard":
		return true, "hard hydrate requested", 0
	case cur.Phase == v1alpha1.HydrateOperationPhaseHydrating:
		return true, "a hydration did not finish", 0
	case !equality.Semantic.DeepEqual(cur.SourceHydrator, *spec):
		return true, "spec.sourceHydrator differs", 0
	case cur.Phase == v1alpha1.HydrateOperationPhaseFailed && asked:
		return true, "hydrate requested after a failure", 0
	case cur.Phase == v1alpha1.HydrateOperationPhaseFailed && cur.FinishedAt != nil:
		if left := RetryAfter - now.Sub(cur.FinishedAt.Time); left > 0 {
			return false, "", left
		}
		return true, "retrying a failed hydration", 0
	}
	maxAge := revisionReuse
	if asked {
		maxAge = 0
	}
	sha, err := h.Repos.ResolveWith(ctx, spec.DrySource.RepoURL, spec.DrySource.TargetRevision, source.ResolveOptions{MaxAge: maxAge})
	if err != nil {
		return true, "the dry revision could not be resolved", 0 // the hydration reports why
	}
	if sha != app.Status.SourceHydrator.LastComparedDryRevision {
		return true, "the dry revision changed", 0
	}
	return false, "", 0
}

// Check returns what is wrong with spec.sourceHydrator, in Argo CD's
// words, or nil.
func Check(spec *v1alpha1.SourceHydrator) []string {
	var out []string
	if spec.DrySource.RepoURL == "" {
		out = append(out, "spec.sourceHydrator.drySource.repoURL is required")
	}
	if spec.SyncSource.TargetBranch == "" {
		out = append(out, "spec.sourceHydrator.syncSource.targetBranch is required")
	}
	if spec.HydrateTo != nil && spec.HydrateTo.TargetBranch == "" {
		out = append(out, "when spec.sourceHydrator.hydrateTo is set, spec.sourceHydrator.hydrateTo.targetBranch is required")
	}
	return out
}

// hydratedPath is the sync source's path in the branch, refused when it is
// the root or leaves the repository.
func hydratedPath(spec *v1alpha1.SourceHydrator) (string, error) {
	p := path.Clean("/" + strings.TrimSpace(spec.SyncSource.Path))
	raw := spec.SyncSource.Path
	if p == "/" {
		return "", fmt.Errorf("app is configured to hydrate to the repository root (branch %q, path %q) which is not allowed", targetBranch(spec), raw)
	}
	if strings.HasPrefix(raw, "/") || slices.Contains(strings.Split(raw, "/"), "..") {
		return "", fmt.Errorf("syncSource.path %q must be a relative path inside the repository", raw)
	}
	return strings.TrimPrefix(p, "/"), nil
}

// targetBranch is where commits go: hydrateTo's branch, else the sync
// source's.
func targetBranch(spec *v1alpha1.SourceHydrator) string {
	if spec.HydrateTo != nil && spec.HydrateTo.TargetBranch != "" {
		return spec.HydrateTo.TargetBranch
	}
	return spec.SyncSource.TargetBranch
}

// syncRepo is the repository hydrated to: the sync source's, else the
// dry source's.
func syncRepo(spec *v1alpha1.SourceHydrator) string {
	return cmp.Or(spec.SyncSource.RepoURL, spec.DrySource.RepoURL)
}
