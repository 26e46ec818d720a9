package diagram

// criticalSlack is how much earlier than a row's end its successor may
// appear to start: clocks written to the second.
const criticalSlack = 1.0

// MarkCriticalPath marks the chain of rows that decided when the work
// ended. It starts at the row that ends last among those that are no
// other row's Parent (a parent waits on its children), and goes back
// through the row it waited on that ended last: one of the same parent in
// an earlier wave, or one it depends on. A row that waited on none was
// started by its parent, whose own chain follows.
func MarkCriticalPath(rows []Row) {
	byID := make(map[string]int, len(rows))
	parents := map[string]bool{}
	for i := range rows {
		byID[rows[i].ID] = i
		if rows[i].Parent != "" {
			parents[rows[i].Parent] = true
		}
	}
	last := -1
	for i := range rows {
		if parents[rows[i].ID] || len(rows[i].Segments) == 0 {
			continue
		}
		if last < 0 || rows[i].end() > rows[last].end() {
			last = i
		}
	}
	seen := map[int]bool{}
	for cur := last; cur >= 0 && !seen[cur]; cur = predecessor(rows, byID, cur) {
		seen[cur] = true
		rows[cur].Critical = true
	}
}

// predecessor is the row rows[i] waited on last, or its parent; -1 when
// there is none.
func predecessor(rows []Row, byID map[string]int, i int) int {
	r := &rows[i]
	start := r.start()
	best := -1
	consider := func(j int) {
		if j == i || len(rows[j].Segments) == 0 || rows[j].end() > start+criticalSlack {
			return
		}
		if best < 0 || rows[j].end() > rows[best].end() {
			best = j
		}
	}
	if r.Parent != "" {
		for j := range rows {
			if rows[j].Parent == r.Parent && rows[j].Wave < r.Wave {
				consider(j)
			}
		}
	}
	for _, d := range r.DependsOn {
		if j, ok := byID[d]; ok {
			consider(j)
		}
	}
	if best >= 0 {
		return best
	}
	if j, ok := byID[r.Parent]; ok && r.Parent != "" {
		return j
	}
	return -1
}
