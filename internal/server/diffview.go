package server

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// diffView is the diff panel of the app page.
type diffView struct {
	Name  string
	Split bool
	Items []diffItem
	Error string
}

// diffItem is one object that differs.
type diffItem struct {
	Group, Kind, Namespace, Name string
	Missing, Extra               bool
	Unified                      []diffLine
	Rows                         []splitRow
}

// diffLine is one line of a unified diff with its class: add, del, hunk,
// meta or ctx.
type diffLine struct {
	Class, Text string
}

// splitRow is one row of a side-by-side diff; Gap marks skipped equal
// lines between hunks.
type splitRow struct {
	LeftNo, RightNo int
	Left, Right     string
	Class           string // equal, change, del, add
	Gap             bool
}

// splitContext is how many equal lines a side-by-side hunk shows around a
// change.
const splitContext = 3

func newDiffItem(m managedResource) diffItem {
	d := diffItem{Group: m.Group, Kind: m.Kind, Namespace: m.Namespace, Name: m.Name, Missing: m.live == nil, Extra: m.predicted == nil}
	for _, line := range strings.Split(strings.TrimRight(m.Diff, "\n"), "\n") {
		class := "ctx"
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			class = "meta"
		case strings.HasPrefix(line, "@@"):
			class = "hunk"
		case strings.HasPrefix(line, "+"):
			class = "add"
		case strings.HasPrefix(line, "-"):
			class = "del"
		}
		d.Unified = append(d.Unified, diffLine{Class: class, Text: line})
	}
	d.Rows = splitRows(yamlLines(m.live), yamlLines(m.predicted))
	return d
}

func yamlLines(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// splitRows lines up live (left) and desired (right) for a side-by-side
// view, keeping splitContext equal lines around each change.
func splitRows(left, right []string) []splitRow {
	m := difflib.NewMatcher(left, right)
	var rows []splitRow
	for gi, group := range m.GetGroupedOpCodes(splitContext) {
		if gi > 0 {
			rows = append(rows, splitRow{Gap: true})
		}
		for _, op := range group {
			rows = append(rows, opRows(op, left, right)...)
		}
	}
	return rows
}

func opRows(op difflib.OpCode, left, right []string) []splitRow {
	var rows []splitRow
	switch op.Tag {
	case 'e':
		for i := 0; i < op.I2-op.I1; i++ {
			rows = append(rows, splitRow{LeftNo: op.I1 + i + 1, Left: left[op.I1+i], RightNo: op.J1 + i + 1, Right: right[op.J1+i], Class: "equal"})
		}
	case 'd':
		for i := op.I1; i < op.I2; i++ {
			rows = append(rows, splitRow{LeftNo: i + 1, Left: left[i], Class: "del"})
		}
	case 'i':
		for j := op.J1; j < op.J2; j++ {
			rows = append(rows, splitRow{RightNo: j + 1, Right: right[j], Class: "add"})
		}
	case 'r':
		n := max(op.I2-op.I1, op.J2-op.J1)
		for k := 0; k < n; k++ {
			row := splitRow{Class: "change"}
			if op.I1+k < op.I2 {
				row.LeftNo, row.Left = op.I1+k+1, left[op.I1+k]
			}
			if op.J1+k < op.J2 {
				row.RightNo, row.Right = op.J1+k+1, right[op.J1+k]
			}
			rows = append(rows, row)
		}
	}
	return rows
}
