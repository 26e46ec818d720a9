package application

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// TestEncodeState: a small state is written as it is, a large one
// compressed, and both read back the same through ProgressOf; a gzip
// bomb is refused.
func TestEncodeState(t *testing.T) {
	progress := func(n int) *SyncProgress {
		p := &SyncProgress{SyncPhase: v1alpha1.SyncPhaseSync, Wave: 1}
		for i := range n {
			p.Tasks = append(p.Tasks, v1alpha1.SyncTask{Type: v1alpha1.TaskApply, SyncPhase: v1alpha1.SyncPhaseSync, Wave: 1, Group: "argoproj.io",
				Version: "v1alpha1", Kind: "Application", Namespace: "argocd", Name: fmt.Sprintf("app-%05d", i), Phase: v1alpha1.TaskApplied})
		}
		return p
	}
	tests := map[string]struct {
		tasks    int
		wantGzip bool
	}{
		"a few tasks":     {tasks: 3},
		"10,000 children": {tasks: 10000, wantGzip: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := progress(tc.tasks)
			raw, err := EncodeState(want)
			if err != nil {
				t.Fatal(err)
			}
			if gz := bytes.HasPrefix(raw.Raw, []byte(`{"gzip"`)); gz != tc.wantGzip {
				t.Fatalf("compressed: %v, want %v", gz, tc.wantGzip)
			}
			if tc.wantGzip && len(raw.Raw) > 100<<10 {
				t.Errorf("the state of %d tasks takes %d bytes compressed", tc.tasks, len(raw.Raw))
			}
			got := ProgressOf(&v1alpha1.OperationState{WavecdState: raw})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateJSONRefusesABomb(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	chunk := []byte(strings.Repeat(" ", 1<<20))
	for range 65 {
		if _, err := zw.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := &apiextensionsv1.JSON{Raw: []byte(`{"gzip":"` + base64.StdEncoding.EncodeToString(buf.Bytes()) + `"}`)}
	if _, err := StateJSON(raw); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("a state expanding to 65 MiB: error %v", err)
	}
	if ProgressOf(&v1alpha1.OperationState{WavecdState: raw}) != nil {
		t.Fatal("ProgressOf read a state that expands beyond the limit")
	}
}
