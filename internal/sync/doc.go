// Package sync owns the sync of one application: the plan (which objects to
// apply, prune or run as hooks, in which order) and the executor that runs
// it against a cluster as a resumable state machine. It is the spec for
// waves and hooks; it matches Argo CD's sync engine unless a paragraph says
// wavecd goes further.
//
// # Plan
//
// [NewPlan] turns the desired manifests and the live objects into tasks.
// Which object is a hook, the phases it runs in, its delete policies and
// its wave are Argo CD's rules, read by internal/hook: the phase comes from
// argocd.argoproj.io/hook (Helm's pre-install and pre-upgrade map to
// PreSync, post-install and post-upgrade to PostSync); without it the
// object is a plain resource of phase Sync. An object annotated Skip alone
// is not synced; a hook of no sync phase (PreDelete, PostDelete, a Helm
// test) is never applied by a sync. The wave is
// argocd.argoproj.io/sync-wave, else helm.sh/hook-weight, else 0.
//
// Tasks sort by phase (PreSync, Sync, PostSync, SyncFail), then wave, then
// kind (Namespace, NetworkPolicy, ResourceQuota, ... APIService; other kinds
// last), then name. A Namespace then moves in front of the first task that
// uses it, a CustomResourceDefinition in front of the first custom resource
// of its kind, each taking that task's phase and wave.
//
// A tracked live object that left the desired state gets a prune task in
// phase Sync; hooks and objects a controller owns are never pruned. Prune
// waves run in reverse: the waves of the prune tasks are mirrored (the first
// with the last). PruneLast (per application, or per object in
// argocd.argoproj.io/sync-options) moves a prune after the last Sync wave.
// An empty desired state with pruning on is refused unless AllowEmpty is set
// ([ErrEmptyDesiredState]). With FailOnSharedResource, an object another
// application tracks fails the sync before anything is applied.
//
// # Execution
//
// [Executor.Run] works on a [State]: it observes it, picks the next action
// and runs it, and hands a copy to OnProgress after each action. The
// actions, in order:
//
//  1. CreateNamespace: the destination namespace is created before anything
//     else, as Argo CD does.
//  2. Dry run: every apply and hook task is dry-run on the server (DryRun
//     All); if one fails, the sync fails and nothing is applied. Kinds whose
//     CRD comes in the same sync (or any missing kind with
//     SkipDryRunOnMissingResource) and objects in a namespace the sync
//     creates skip it. wavecd goes further for a kind whose CRD comes in an
//     earlier step of the same sync: its objects are dry-run when their
//     step starts, before anything of the step is written, with no option
//     needed (Options.ArgoParity skips them as Argo CD does). With ApplyOutOfSyncOnly the server-side diff is the
//     dry run and objects already in sync are left out.
//  3. Steps: the first phase and wave with unfinished tasks runs: prunes
//     first (deleted with PrunePropagationPolicy, foreground by default;
//     Prune=false skips, Prune=confirm waits for PruneConfirmed), then hooks
//     of an earlier sync with the BeforeHookCreation policy (the default) are
//     deleted and waited away, then objects are written kind by kind, the
//     objects of one kind in parallel. Writes use server-side apply (field
//     manager "wavecd"), client-side apply, Replace or Force as the options
//     say (Validate=false turns strict field validation off).
//  4. Wait: the next step starts when every object of this one is Healthy
//     (or has no health check), every hook completed and every pruned object
//     is gone. wavecd goes further than Argo CD's 2 s sleep and 30 s
//     re-check: it watches the step's objects and advances on the watch
//     event that makes the step done (WaveDelay adds Argo CD's delay back).
//     An admission webhook configuration or APIService is Healthy only
//     once the Services it calls have a ready endpoint (health's readiness
//     gates; the wait watches their EndpointSlices), so the next step's
//     objects are admitted on the first try.
//     While it waits, the state's message names the objects and why, e.g.
//     "Deployment app/web: 0/1 ready; pod web-x Pending: 0/2 nodes are
//     available: ...". As in Argo CD, a last step without hooks is not
//     waited for: a sync with one wave and no hooks is done once applied.
//     wavecd also says when a wait is stuck rather than slow: when the
//     message has not changed for Options.StallTimeout (2 minutes by
//     default) and pods the step waits on are Pending because the scheduler
//     cannot place them (the pods of a workload, or of the workloads a child
//     Application lists as not Healthy), the state's Stalled field and its
//     message say "stalled: " and why: the step and app, the object, the
//     pod, the scheduler's reason, and where the node provisioners are
//     (Options.NodeProvisioners, e.g. "no node provisioner is running;
//     karpenter is in wave 1 of root"). The sync goes on waiting; progress
//     clears it. The controller turns it into the SyncStalled condition.
//  5. Failure: an object that fails to apply, a Degraded object or a failed
//     hook fails the sync; running hooks are let finish, then the SyncFail
//     hooks run and are waited for, and the sync ends Failed.
//  6. End: hooks are deleted when their delete policy matches their result
//     (HookSucceeded, HookFailed).
//
// # Hooks
//
// A hook with only a generateName gets its name once, when the sync starts
// (generateName + revision[:7] + "-" + phase + "-" + start time, the sync's id
// standing in for an empty revision), and the name is saved in the state:
// Options.Checkpoint gets the state before the first such hook is created,
// so a controller killed right after creating it resumes the same sync
// instead of naming the hook anew and running it twice.
// Every hook carries the argocd.argoproj.io/hook-finalizer finalizer, so
// its result is read before it disappears; the finalizer is removed once
// the result is read. A hook's phase comes from its health: Healthy or no
// check is Succeeded, Degraded or Unknown is Failed, anything else Running.
//
// # Resume
//
// Every hook also carries wavecd.io/sync-id with the sync's id. A State
// saved mid-sync (the controller persists it in status.operationState) and
// given to a new executor continues the sync: finished tasks stay finished,
// a running hook is waited on, and a hook created just before a crash that
// kept the state from being saved is recognised by its sync id and adopted,
// never created twice.
//
// # Stop
//
// A sync may be asked to stop (Options.Stop, closed when a new revision
// supersedes an automated sync). It stops only at a safe point: between
// steps or while a step's objects are awaited, not while it is failing
// (its SyncFail hooks run) and not while a hook it created is running (the
// hook's result is read and its finalizer released first, so each hook
// runs and is recorded once). Run then returns [ErrStopped] with the state
// Failed, saying which step it stopped in and what it waited for; nothing
// already written is undone. Options.Deadline (a sync timeout) ends a wait
// at once instead, a step's writes finishing first: running hooks are
// released from the hook finalizer and the sync ends Failed with the
// reason and what it waited for. Options.Terminate (a user's
// terminate-op) ends it at once too: running hooks are deleted, the state
// ends Failed, "Operation terminated", and Run returns [ErrTerminated].
//
// The package does not render manifests, read Git or decide when to sync.
package sync
