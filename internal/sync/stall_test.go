package sync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// stallFixture is one case of testdata/stall: what a stalled wait sees and
// the explanation wanted ("" when it is no stall).
type stallFixture struct {
	App     string `json:"app"`
	Step    string `json:"step"`
	Blocked []struct {
		Path []string         `json:"path"`
		Pods []map[string]any `json:"pods"`
	} `json:"blocked"`
	Provisioners   []NodeProvisioner `json:"provisioners"`
	ProvisionerErr string            `json:"provisionerErr"`
	NoFinder       bool              `json:"noFinder"`
	Want           string            `json:"want"`
}

func (f stallFixture) input() stallInput {
	in := stallInput{App: f.App, Step: f.Step, Provisioners: f.Provisioners, ProvisionerErr: f.ProvisionerErr, NoFinder: f.NoFinder}
	for _, b := range f.Blocked {
		obj := blockedObject{Path: b.Path}
		for _, p := range b.Pods {
			obj.Pods = append(obj.Pods, &unstructured.Unstructured{Object: p})
		}
		in.Blocked = append(in.Blocked, obj)
	}
	return in
}

func TestExplainStall(t *testing.T) {
	files, err := filepath.Glob("testdata/stall/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/stall: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var f stallFixture
			if err := yaml.UnmarshalStrict(b, &f); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			in := f.input()
			got := explainStall(in)
			if diff := cmp.Diff(f.Want, got); diff != "" {
				t.Errorf("explanation (-want +got):\n%s", diff)
			}
			if stalled := hasUnschedulable(in.Blocked); stalled != (f.Want != "") {
				t.Errorf("hasUnschedulable = %v, want %v", stalled, f.Want != "")
			}
		})
	}
}

func TestStepName(t *testing.T) {
	for name, tc := range map[string]struct {
		st   State
		want string
	}{
		"sync phase":      {st: State{SyncPhase: v1alpha1.SyncPhaseSync, Wave: 3}, want: "wave 3"},
		"no phase yet":    {st: State{}, want: "wave 0"},
		"hook phase":      {st: State{SyncPhase: v1alpha1.SyncPhasePreSync, Wave: -1}, want: "PreSync wave -1"},
		"post-sync phase": {st: State{SyncPhase: v1alpha1.SyncPhasePostSync, Wave: 2}, want: "PostSync wave 2"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := stepName(&tc.st); got != tc.want {
				t.Errorf("stepName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWaitReportsStall runs a wave whose pod can never be scheduled with a
// short stall timeout: the state says "stalled" with the pod, the
// scheduler's reason and where the node provisioner is.
func TestWaitReportsStall(t *testing.T) {
	_, ns, ctx, run := setup(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run.opts.StallTimeout = 2 * time.Second
	run.opts.NodeProvisioners = func(context.Context) ([]NodeProvisioner, error) {
		return []NodeProvisioner{{App: "karpenter", Parent: "root", Wave: 1}}, nil
	}
	var stalled State
	var waitingBefore bool
	run.opts.OnProgress = func(st State) {
		if strings.HasPrefix(st.Message, "waiting for ") {
			waitingBefore = true
		}
		if st.Stalled != "" {
			stalled = st
			cancel()
		}
	}
	start := time.Now()
	_, _, err := run.runUntil(ctx, fixture(t, "sync/unschedulable.yaml", ns))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() = %v, want it cancelled once stalled", err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("stalled after %s, before the 2s stall timeout", took)
	}
	if !waitingBefore {
		t.Error("no waiting message before the stall")
	}
	wantPrefix := "wave 0 of app-" + ns + " waits on Deployment " + ns + "/stuck: pod stuck-"
	wantSuffix := "; no node provisioner is running; karpenter is in wave 1 of root"
	if !strings.HasPrefix(stalled.Stalled, wantPrefix) || !strings.HasSuffix(stalled.Stalled, wantSuffix) ||
		!strings.Contains(stalled.Stalled, " Pending: 0/2 nodes are available: ") {
		t.Errorf("stall reason = %q, want %q...Pending: 0/2 nodes are available: ...%q", stalled.Stalled, wantPrefix, wantSuffix)
	}
	if stalled.Message != "stalled: "+stalled.Stalled {
		t.Errorf("message = %q, want stalled: and the reason", stalled.Message)
	}
}
