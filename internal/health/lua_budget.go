package health

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// LuaMemoryLimit is how many bytes one run of a Lua health script may
// allocate. Argo CD's scripts allocate a few kilobytes.
const LuaMemoryLimit = 64 << 20

// errLuaMemory is a run stopped for allocating more than its budget.
var errLuaMemory = errors.New("lua memory budget exceeded")

// gopher-lua has no allocator hook, so a run's memory is bounded two ways:
//
//   - The functions that can make a string much larger than their input
//     (string.rep, string.format, string.gsub, table.concat) are replaced
//     by versions that compute the size first and refuse what would pass
//     the budget, so no single call allocates gigabytes at once.
//   - gopher-lua asks its context whether to stop before every
//     instruction. The run's context (luaBudget) answers by reading the
//     process's cumulative allocation counter: every 64 instructions while
//     little is allocated, before every instruction once allocation runs
//     fast. Concatenation and table growth (VM instructions, not calls)
//     allocate at most about twice what is already allocated per
//     instruction, so a run stops within a small multiple of its budget.
//
// The counter is the process's: allocations of other goroutines during a
// run count against it too. Health scripts run for microseconds, so in
// practice the budget is the script's.

// luaBudget is the context a script runs under: its time limit, and its
// allocation budget, checked as gopher-lua polls Done.
type luaBudget struct {
	context.Context // the time limit
	limit           uint64
	start           uint64
	last            uint64
	every, left     int
	exceeded        bool
	// refused says which call was refused for its size, if one was.
	refused string
	sample  []metrics.Sample
}

const (
	// luaCheckEvery is the instructions between checks while a run
	// allocates slowly.
	luaCheckEvery = 64
	// luaFastStep is the allocation between two checks that makes the
	// next checks run before every instruction.
	luaFastStep = 256 << 10
)

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func newLuaBudget(ctx context.Context, limit uint64) *luaBudget {
	b := &luaBudget{Context: ctx, limit: limit, every: luaCheckEvery, left: luaCheckEvery,
		sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
	b.start = b.allocated()
	b.last = b.start
	return b
}

func (b *luaBudget) allocated() uint64 {
	metrics.Read(b.sample)
	if b.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return b.sample[0].Value.Uint64()
}

// Done is called by gopher-lua before every instruction.
func (b *luaBudget) Done() <-chan struct{} {
	if b.left--; b.left <= 0 && !b.exceeded {
		b.check()
	}
	if b.exceeded {
		return closedDone
	}
	return b.Context.Done()
}

func (b *luaBudget) check() {
	now := b.allocated()
	if now-b.start > b.limit {
		b.exceeded = true
		return
	}
	if now-b.last > luaFastStep {
		b.every = 1
	} else {
		b.every = min(b.every*2, luaCheckEvery)
	}
	b.last, b.left = now, b.every
}

// Err is the budget's error once it is spent, else the time limit's.
func (b *luaBudget) Err() error {
	if b.exceeded {
		return errLuaMemory
	}
	return b.Context.Err()
}

// reserve raises a Lua error when n more bytes would pass the budget of
// the run L belongs to (if any).
func reserve(L *lua.LState, n int64, what string) {
	b, ok := L.Context().(*luaBudget)
	if !ok {
		return
	}
	used := b.allocated() - b.start
	if n < 0 || uint64(n) > b.limit || used+uint64(n) > b.limit {
		b.exceeded = true
		if n < 0 {
			b.refused = what + " would allocate more bytes than an int holds"
		} else {
			b.refused = fmt.Sprintf("%s would allocate %d bytes", what, n)
		}
		L.RaiseError("%s", b.refused)
	}
}

// limitLibraries replaces the string and table functions whose output can
// be far larger than their input with budgeted versions, in the libraries
// of L's globals (before a script or the string methods see them).
func limitLibraries(L *lua.LState) {
	str, ok := L.G.Global.RawGetString(lua.StringLibName).(*lua.LTable)
	if ok {
		str.RawSetString("rep", L.NewFunction(limitedRep))
		str.RawSetString("format", L.NewFunction(limitedFormat(str.RawGetString("format").(*lua.LFunction))))
		str.RawSetString("gsub", L.NewFunction(limitedGsub))
	}
	if tbl, ok := L.G.Global.RawGetString(lua.TabLibName).(*lua.LTable); ok {
		tbl.RawSetString("concat", L.NewFunction(limitedConcat(tbl.RawGetString("concat").(*lua.LFunction))))
	}
}

func limitedRep(L *lua.LState) int {
	s, n := L.CheckString(1), L.CheckInt64(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	size := int64(len(s)) * n
	if size/n != int64(len(s)) {
		size = -1 // overflow
	}
	reserve(L, size, "string.rep")
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

// limitedFormat refuses widths and precisions of more than two digits, as
// C Lua does ("%999999999s" would be a gigabyte), and charges the output.
func limitedFormat(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		format := L.CheckString(1)
		size := int64(len(format))
		for i := 0; i < len(format); i++ {
			if format[i] != '%' {
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			for _, part := range []string{"width", "precision"} {
				if part == "precision" {
					if j >= len(format) || format[j] != '.' {
						break
					}
					j++
				}
				digits := 0
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j, digits = j+1, digits+1
				}
				if digits > 2 {
					L.RaiseError("invalid format (%s too long) in %q", part, format)
				}
			}
			size += 100
			i = j
		}
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok {
				size += int64(len(s))
			}
		}
		reserve(L, size, "string.format")
		return callOriginal(L, orig)
	}
}

// limitedConcat sums the sizes of the parts before joining them.
func limitedConcat(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		tbl := L.CheckTable(1)
		sep := int64(len(L.OptString(2, "")))
		i, j := L.OptInt(3, 1), L.OptInt(4, tbl.Len())
		var size int64
		for k := max(i, 1); k <= min(j, tbl.Len()); k++ {
			v := tbl.RawGetInt(k)
			if v == lua.LNil {
				break // the original reports it
			}
			size += int64(len(lua.LVAsString(v))) + sep
			if size > LuaMemoryLimit {
				break
			}
		}
		reserve(L, size, "table.concat")
		return callOriginal(L, orig)
	}
}

// callOriginal calls a library function with the arguments L was given.
func callOriginal(L *lua.LState, fn *lua.LFunction) int {
	return fn.GFunction(L)
}

// limitedGsub is string.gsub in one pass: gopher-lua's copies the whole
// string once per match (quadratic time, out of reach of the time limit
// since it runs as one call), and its output is charged as it grows.
func limitedGsub(L *lua.LState) int {
	str, pat := L.CheckString(1), L.CheckString(2)
	L.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
	repl := L.CheckAny(3)
	limit := L.OptInt(4, -1)
	matches, err := pm.Find(pat, []byte(str), 0, limit)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	// A replacement text with captures may repeat the whole string.
	var bound int64
	if r, ok := repl.(lua.LString); ok {
		bound = int64(len(r))
		if strings.IndexByte(string(r), '%') >= 0 {
			bound *= int64(len(str)) + 1
		}
	}
	var out strings.Builder
	prev := 0
	for _, m := range matches {
		start, end := m.Capture(0), m.Capture(1)
		reserve(L, int64(out.Len())+int64(start-prev)+bound, "string.gsub")
		replaced, keep := gsubReplacement(L, str, repl, m)
		out.WriteString(str[prev:start])
		if keep {
			out.WriteString(str[start:end])
		} else {
			out.WriteString(replaced)
		}
		prev = end
		reserve(L, int64(out.Len()), "string.gsub")
	}
	out.WriteString(str[prev:])
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(len(matches)))
	return 2
}

// gsubReplacement is what one match becomes; keep is true when the match
// stays as it is (a table or function gave nil or false).
func gsubReplacement(L *lua.LState, str string, repl lua.LValue, m *pm.MatchData) (string, bool) {
	switch r := repl.(type) {
	case lua.LString:
		var b strings.Builder
		for i := 0; i < len(r); i++ {
			c := r[i]
			if c != '%' || i+1 == len(r) {
				b.WriteByte(c)
				continue
			}
			i++
			if d := r[i]; d >= '0' && d <= '9' {
				b.WriteString(captureText(L, m, str, 2*int(d-'0')))
			} else {
				b.WriteByte(d)
			}
		}
		return b.String(), false
	case *lua.LTable:
		v := L.GetField(r, captureText(L, m, str, firstCapture(m)))
		if m.IsPosCapture(firstCapture(m)) {
			v = L.GetTable(r, lua.LNumber(m.Capture(firstCapture(m))))
		}
		return lua.LVAsString(v), lua.LVIsFalse(v)
	case *lua.LFunction:
		L.Push(r)
		n := 0
		if m.CaptureLength() > 2 {
			for i := 2; i < m.CaptureLength(); i += 2 {
				L.Push(captureValue(L, m, str, i))
				n++
			}
		} else {
			L.Push(lua.LString(captureText(L, m, str, 0)))
			n = 1
		}
		L.Call(n, 1)
		v := L.Get(-1)
		L.Pop(1)
		return lua.LVAsString(v), lua.LVIsFalse(v)
	}
	return "", true
}

func firstCapture(m *pm.MatchData) int {
	if m.CaptureLength() > 2 {
		return 2
	}
	return 0
}

func captureValue(L *lua.LState, m *pm.MatchData, str string, idx int) lua.LValue {
	if m.IsPosCapture(idx) {
		return lua.LNumber(m.Capture(idx))
	}
	return lua.LString(captureText(L, m, str, idx))
}

// captureText is capture idx (0: the whole match; %1 is 2) as text.
func captureText(L *lua.LState, m *pm.MatchData, str string, idx int) string {
	if idx >= m.CaptureLength() && idx == 2 {
		idx = 0
	}
	if idx >= m.CaptureLength() {
		L.RaiseError("invalid capture index %%%d", idx/2)
	}
	if m.IsPosCapture(idx) {
		return fmt.Sprint(m.Capture(idx))
	}
	return str[m.Capture(idx):m.Capture(idx+1)]
}
