package operation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/logctx"
	wsync "github.com/wavecd/wavecd/internal/sync"
)

// save writes the operation state; fields other than operationState (and
// operation when update clears it) are left to the controller. A write
// pending for the operation's first save (an automated sync's request)
// goes first, with update in it when it can.
//
// The runner keeps the app as it last wrote it: while the cache has not
// caught up with that write (a sync saving its steps in quick
// succession), the next write starts from it instead of reading the API
// server.
func (rn *Runner) save(ctx context.Context, app *v1alpha1.Application, update func(app *v1alpha1.Application)) error {
	name := rn.key(app)
	if w := rn.Registry.pending(name); w != nil {
		combined, err := w.Write(ctx, update)
		if err != nil {
			return fmt.Errorf("write operation state of %s: %w", name, err)
		}
		if combined {
			return nil
		}
	}
	key := client.ObjectKey{Namespace: app.Namespace, Name: app.Name}
	written, err := rn.Status.UpdateFrom(ctx, key, rn.Registry.lastWritten(name), update)
	if err != nil {
		return fmt.Errorf("write operation state of %s: %w", name, err)
	}
	rn.Registry.Wrote(name, written)
	return nil
}

// key is app's key in the Registry: its instance name.
func (rn *Runner) key(app *v1alpha1.Application) string {
	return application.Namespaces{Control: rn.Namespace}.InstanceName(app.Namespace, app.Name)
}

// saveProgress saves a running sync's state st: what a new controller
// resumes it from.
func (rn *Runner) saveProgress(ctx context.Context, app *v1alpha1.Application, opState *v1alpha1.OperationState, st *wsync.State, revision string) {
	opState.Phase = v1alpha1.OperationRunning
	opState.Message = st.Message
	opState.SyncResult = rn.syncResult(st, revision, app)
	if !rn.ArgoCDCRD {
		opState.WavecdState = encodeState(st)
	}
	snapshot := opState.DeepCopy()
	err := rn.save(ctx, app, func(a *v1alpha1.Application) {
		a.Status.OperationState = snapshot
		markStalled(&a.Status, st, rn.Now())
	})
	if err != nil {
		logctx.From(ctx).Warn("save sync progress", "err", err)
	}
}

// markStalled sets the SyncStalled condition while the running sync's step
// is stalled, with the operation's message, and clears it otherwise.
func markStalled(status *v1alpha1.ApplicationStatus, st *wsync.State, now time.Time) {
	if st.Stalled == "" || st.Phase.Completed() {
		application.ClearCondition(status, v1alpha1.ApplicationConditionSyncStalled)
		return
	}
	application.SetCondition(status, v1alpha1.ApplicationConditionSyncStalled, "stalled: "+st.Stalled, now)
}

// encodeState is the sync state as status.operationState.wavecdState
// holds it: compressed when large (a root of thousands of children).
func encodeState(st *wsync.State) *apiextensionsv1.JSON {
	raw, err := application.EncodeState(st)
	if err != nil {
		return nil
	}
	return raw
}

// decodeState is the sync state an operation state saved; empty when it
// saved none, or none this controller reads.
func decodeState(os *v1alpha1.OperationState) *wsync.State {
	if os == nil || os.WavecdState == nil {
		return &wsync.State{}
	}
	b, err := application.StateJSON(os.WavecdState)
	st := &wsync.State{}
	if err != nil || json.Unmarshal(b, st) != nil {
		return &wsync.State{}
	}
	return st
}

// syncResult converts the executor's result to Argo CD's shape, without
// the resources' times where the CRD would drop them.
func (rn *Runner) syncResult(st *wsync.State, revision string, app *v1alpha1.Application) *v1alpha1.SyncOperationResult {
	res := st.Result()
	out := &v1alpha1.SyncOperationResult{Revision: revision}
	if app.Spec.Source != nil {
		out.Source = *app.Spec.Source
	}
	for _, rr := range res.Resources {
		out.Resources = append(out.Resources, &v1alpha1.ResourceResult{
			Group: rr.Group, Version: rr.Version, Kind: rr.Kind, Namespace: rr.Namespace, Name: rr.Name,
			Status: rr.Status, Message: rr.Message, HookType: rr.HookType,
			HookPhase: string(rr.HookPhase), SyncPhase: string(rr.SyncPhase),
		})
		if !rn.ArgoCDCRD {
			last := out.Resources[len(out.Resources)-1]
			last.StartedAt, last.FinishedAt = microTime(rr.StartedAt), microTime(rr.FinishedAt)
		}
	}
	return out
}

// microTime is t for the API; nil when zero.
func microTime(t time.Time) *metav1.MicroTime {
	if t.IsZero() {
		return nil
	}
	m := metav1.NewMicroTime(t)
	return &m
}

func metaNow(t time.Time) metav1.Time { return metav1.NewTime(t) }
