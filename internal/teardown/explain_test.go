package teardown

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/testenv"
)

// progressCase is one file of testdata/progress: the objects a step (1 of
// 3) waits on, and what Message and Stalled (at now, with a 2-minute stall
// timeout) say.
type progressCase struct {
	Description string           `json:"description"`
	Step        string           `json:"step"`
	Now         time.Time        `json:"now"`
	Waiting     []map[string]any `json:"waiting"`
	Message     string           `json:"message"`
	Stalled     string           `json:"stalled"`
}

func TestProgressMessages(t *testing.T) {
	testenv.EachFixture(t, "progress", func(t *testing.T, tc *progressCase) {
		p := Progress{Step: tc.Step, Index: 1, Steps: 3, Waiting: objects(tc.Waiting)}
		if diff := cmp.Diff(tc.Message, p.Message()); diff != "" {
			t.Errorf("%s: Message (-want +got):\n%s", tc.Description, diff)
		}
		if diff := cmp.Diff(tc.Stalled, p.Stalled(tc.Now, 2*time.Minute)); diff != "" {
			t.Errorf("%s: Stalled (-want +got):\n%s", tc.Description, diff)
		}
	})
}
