package appstatus

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// StatusBudget is the size an Application may take when written: etcd
// refuses a value above 1.5 MiB, and an app of many thousand objects
// (the root of an app of apps with 10,000 children) lists more than that
// in status.resources and status.operationState.syncResult.resources.
const StatusBudget = 1 << 20

// fitMinEntries is how many list entries an app has before Fit measures
// it: below it no app comes near the budget, and measuring costs a
// marshal per write.
const fitMinEntries = 500

// messageMax is the longest message one list entry keeps when a write
// was refused as too large.
const messageMax = 4 << 10

// Fit keeps app within budget bytes as JSON: when it is larger, it drops
// entries from status.resources and from the sync result's resources,
// keeping for each list the first entry of every kind (the kinds a
// comparison lists are read from status.resources), then the entries that
// need attention (not Synced, not Healthy, hooks, objects to prune, failed
// results), then the others in order, as many as fit; and it sets the
// StatusTruncatedWarning condition saying how many of each it lists. An
// app that fits loses the condition, unless its lists are the truncated
// ones the condition counts (a write that left the lists as read).
func Fit(app *v1alpha1.Application, budget int, now time.Time) {
	st := &app.Status
	results := syncResults(st)
	total := len(st.Resources) + len(results)
	size := 0
	if total >= fitMinEntries {
		size = jsonSize(app)
	}
	if size <= budget {
		if !stillTruncated(st) {
			application.ClearCondition(st, v1alpha1.ApplicationConditionStatusTruncated)
		}
		return
	}
	res := make([]any, len(st.Resources))
	resAttention := make([]bool, len(st.Resources))
	resKinds := make([]string, len(st.Resources))
	for i := range st.Resources {
		r := &st.Resources[i]
		res[i], resKinds[i] = r, r.Group+"/"+r.Kind
		resAttention[i] = r.Status != v1alpha1.SyncStatusCodeSynced || r.Hook || r.RequiresPruning ||
			(r.Health != nil && r.Health.Status != "Healthy")
	}
	out := make([]any, len(results))
	outAttention := make([]bool, len(results))
	outKinds := make([]string, len(results))
	for i, r := range results {
		out[i], outKinds[i] = r, r.Group+"/"+r.Kind
		outAttention[i] = r.Status != v1alpha1.ResultCodeSynced || r.HookType != ""
	}
	listed := jsonSize(st.Resources) + jsonSize(results)
	// The condition Fit sets takes room too: room for the longest it can
	// be, in place of the one the app may carry, so that a fit does not
	// depend on whether the app carried it.
	room := budget - (size - listed - truncatedSize(st)) - len(truncatedFormat) - 128
	keepRes, keepOut := choose(room, []entries{
		{items: res, attention: resAttention, kinds: resKinds},
		{items: out, attention: outAttention, kinds: outKinds},
	})
	nRes, nOut := len(st.Resources), len(results)
	st.Resources = filter(st.Resources, keepRes)
	if nOut > 0 {
		st.OperationState.SyncResult.Resources = filter(results, keepOut)
	}
	application.SetCondition(st, v1alpha1.ApplicationConditionStatusTruncated, truncatedMessage(len(st.Resources), nRes, len(syncResults(st)), nOut), now)
}

// entries is one list Fit chooses from.
type entries struct {
	items     []any
	attention []bool
	kinds     []string
}

// choose picks the entries of two lists to keep within room bytes: the
// first of each kind, then those needing attention, then the rest; each
// pass takes the lists' entries in turn, so that both keep a share. It
// returns the kept indexes per list.
func choose(room int, lists []entries) ([]bool, []bool) {
	keep := make([][]bool, len(lists))
	longest := 0
	for i, l := range lists {
		keep[i] = make([]bool, len(l.items))
		longest = max(longest, len(l.items))
	}
	pass := func(want func(l entries, j int, seen map[string]bool) bool) {
		seen := make([]map[string]bool, len(lists))
		for i := range lists {
			seen[i] = map[string]bool{}
		}
		for j := range longest {
			for i, l := range lists {
				if j >= len(l.items) || keep[i][j] || !want(l, j, seen[i]) {
					continue
				}
				if n := jsonSize(l.items[j]) + 1; n <= room {
					room -= n
					keep[i][j], seen[i][l.kinds[j]] = true, true
				}
			}
		}
	}
	pass(func(l entries, j int, seen map[string]bool) bool { return !seen[l.kinds[j]] })
	pass(func(l entries, j int, _ map[string]bool) bool { return l.attention[j] })
	pass(func(entries, int, map[string]bool) bool { return true })
	return keep[0], keep[1]
}

func filter[T any](in []T, keep []bool) []T {
	out := make([]T, 0, len(in))
	for i, v := range in {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}

func syncResults(st *v1alpha1.ApplicationStatus) v1alpha1.ResourceResults {
	if st.OperationState == nil || st.OperationState.SyncResult == nil {
		return nil
	}
	return st.OperationState.SyncResult.Resources
}

// jsonSize is the length of v as JSON, counted as it is encoded: a
// root's status is hundreds of KiB, and a copy of it per write (what
// json.Marshal returns) was the most a root's writes allocated.
func jsonSize(v any) int {
	var n byteCounter
	if err := json.NewEncoder(&n).Encode(v); err != nil {
		return 0
	}
	return int(n) - 1 // the newline Encode ends with
}

// byteCounter counts what is written to it.
type byteCounter int

func (c *byteCounter) Write(b []byte) (int, error) {
	*c += byteCounter(len(b))
	return len(b), nil
}

const truncatedFormat = "status lists %d of %d resources and %d of %d sync results to stay within 1 MiB " +
	"(etcd refuses an object above 1.5 MiB); those out of sync, unhealthy, hooks and to prune are listed first, " +
	"and one of each kind"

func truncatedMessage(res, resTotal, out, outTotal int) string {
	return fmt.Sprintf(truncatedFormat, res, resTotal, out, outTotal)
}

// stillTruncated reports whether st carries the truncation condition and
// its lists are as long as the condition says it lists: they are the
// truncated lists, written back unchanged.
func stillTruncated(st *v1alpha1.ApplicationStatus) bool {
	for _, c := range st.Conditions {
		if c.Type != v1alpha1.ApplicationConditionStatusTruncated {
			continue
		}
		var res, resTotal, out, outTotal int
		if _, err := fmt.Sscanf(c.Message, "status lists %d of %d resources and %d of %d sync results",
			&res, &resTotal, &out, &outTotal); err != nil {
			return false
		}
		return res == len(st.Resources) && out == len(syncResults(st))
	}
	return false
}

// truncatedSize is the size the truncation condition takes in st, 0
// when st has none.
func truncatedSize(st *v1alpha1.ApplicationStatus) int {
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.ApplicationConditionStatusTruncated {
			return jsonSize(c) + 1
		}
	}
	return 0
}

// shortenMessages cuts every list entry's message to messageMax bytes,
// keeping valid UTF-8.
func shortenMessages(app *v1alpha1.Application) {
	st := &app.Status
	for i := range st.Resources {
		if h := st.Resources[i].Health; h != nil {
			h.Message = shorten(h.Message)
		}
	}
	for _, r := range syncResults(st) {
		r.Message = shorten(r.Message)
	}
	for i := range st.Conditions {
		st.Conditions[i].Message = shorten(st.Conditions[i].Message)
	}
	if st.OperationState != nil {
		st.OperationState.Message = shorten(st.OperationState.Message)
	}
}

func shorten(s string) string {
	if len(s) <= messageMax {
		return s
	}
	const more = " ... (cut)"
	return strings.ToValidUTF8(s[:messageMax-len(more)], "") + more
}
