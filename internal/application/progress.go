package application

import (
	"encoding/json"
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// SyncProgress is how far a running sync has come, as wavecd records it in
// status.operationState.wavecdState: the step it works on, whether that is
// stalled, and each object and hook with its phase and times. It is the
// documented view of that field for readers (the API server's pages, the
// rehearsal); the sync engine (internal/sync) writes more, for its own
// resumption, and nothing outside it may rely on the rest.
type SyncProgress struct {
	// SyncPhase is the phase being worked on and Wave its wave.
	SyncPhase v1alpha1.SyncPhase `json:"syncPhase,omitempty"`
	Wave      int                `json:"wave"`
	// Stalled says why the current step is stalled: it made no progress
	// for the stall timeout and pods it waits on cannot be scheduled; ""
	// while it progresses.
	Stalled string              `json:"stalled,omitempty"`
	Tasks   []v1alpha1.SyncTask `json:"tasks"`
}

// ProgressOf reads the progress a running (or interrupted) sync recorded
// in op; nil when op records none.
func ProgressOf(op *v1alpha1.OperationState) *SyncProgress {
	if op == nil || op.WavecdState == nil {
		return nil
	}
	raw, err := StateJSON(op.WavecdState)
	p := &SyncProgress{}
	if err != nil || json.Unmarshal(raw, p) != nil {
		return nil
	}
	return p
}

// Step names the phase and wave the sync works on: "wave 1", "PreSync
// wave 0"; "" before it has one.
func (p *SyncProgress) Step() string {
	switch {
	case p == nil || p.SyncPhase == "":
		return ""
	case p.SyncPhase == v1alpha1.SyncPhaseSync:
		return fmt.Sprintf("wave %d", p.Wave)
	}
	return fmt.Sprintf("%s wave %d", p.SyncPhase, p.Wave)
}
