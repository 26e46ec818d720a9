package provisioner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	wsync "github.com/wavecd/wavecd/internal/sync"
	"github.com/wavecd/wavecd/internal/testenv"
)

// provisionerFixture is one case of testdata/candidates.
type provisionerFixture struct {
	Candidates []struct {
		Parent  string               `json:"parent"`
		Created bool                 `json:"created"`
		App     v1alpha1.Application `json:"app"`
		Objects []map[string]any     `json:"objects"`
	} `json:"candidates"`
	Want []wsync.NodeProvisioner `json:"want"`
}

func TestNodeProvisionersOf(t *testing.T) {
	testenv.EachFixture(t, "candidates", func(t *testing.T, f *provisionerFixture) {
		var cands []candidate
		for i := range f.Candidates {
			c := f.Candidates[i]
			pc := candidate{app: &c.App, parent: c.Parent, created: c.Created}
			for _, o := range c.Objects {
				pc.objects = append(pc.objects, &unstructured.Unstructured{Object: o})
			}
			cands = append(cands, pc)
		}
		got := provisionersOf(cands)
		if diff := cmp.Diff(f.Want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("provisioners (-want +got):\n%s", diff)
		}
	})
}
