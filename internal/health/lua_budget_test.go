package health

import (
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
)

// TestCWE400LuaMemoryBudget runs scripts that try to exhaust the controller's
// memory (CWE-400, uncontrolled resource consumption): each is stopped
// with an error naming the script and the object, having allocated a
// small multiple of its budget at most.
func TestCWE400LuaMemoryBudget(t *testing.T) {
	const budget = 8 << 20
	tests := map[string]struct {
		source  string
		wantErr string
	}{
		"string.rep of 10 GB in one call": {
			source:  `return { status = string.rep("x", 1e10) }`,
			wantErr: "string.rep would allocate 10000000000 bytes",
		},
		"string.rep as a method": {
			source:  `local s = "xy"; return { status = s:rep(1e9) }`,
			wantErr: "string.rep would allocate 2000000000 bytes",
		},
		"string.rep in a loop": {
			source:  `local t = {}; while true do t[#t+1] = string.rep("x", 1e6) end`,
			wantErr: "memory budget",
		},
		"a string doubled by concatenation": {
			source:  `local s = "x"; while true do s = s .. s end`,
			wantErr: "memory budget",
		},
		"a string grown one byte at a time": {
			source:  `local s = ""; while true do s = s .. "x" end`,
			wantErr: "memory budget",
		},
		"table growth": {
			source:  `local t = {}; local i = 0; while true do i = i + 1; t[i] = i end`,
			wantErr: "memory budget",
		},
		"tables of tables": {
			source:  `local t = {}; while true do t = { t, {}, {} } end`,
			wantErr: "memory budget",
		},
		"table.concat of one string repeated": {
			source:  `local s = string.rep("x", 1e6); local t = {}; for i = 1, 1000 do t[i] = s end; return { status = table.concat(t) }`,
			wantErr: "table.concat would allocate",
		},
		"string.format with a huge width": {
			source:  `return { status = string.format("%999999999s", "x") }`,
			wantErr: "invalid format (width too long)",
		},
		"string.gsub repeating a large string at every position": {
			source:  `local s = string.rep("x", 1e5); return { status = s:gsub("", s) }`,
			wantErr: "string.gsub would allocate",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, openLibs := range []bool{false, true} {
				s := NewScript("hostile.lua", tc.source, openLibs)
				s.memory = budget
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				_, err := s.Check(widget())
				runtime.ReadMemStats(&after)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "hostile.lua") {
					t.Fatalf("openLibs=%v: error = %v, want one naming hostile.lua and containing %q", openLibs, err, tc.wantErr)
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*budget {
					t.Errorf("openLibs=%v: the run allocated %d MiB, want at most 8 times its budget of %d MiB", openLibs, grew>>20, budget>>20)
				}
			}
		})
	}
	// A stopped run leaves the pool usable.
	if got := runScript(t, `return { status = "Healthy" }`, false); got.Status != Healthy {
		t.Errorf("run after a stopped one = %+v, want Healthy", got)
	}
}

func TestLuaMemoryErrorNamesTheObject(t *testing.T) {
	s := NewScript("argocd-cm resource.customizations.health.example.com_Widget", `local s = "x"; while true do s = s .. s end`, false)
	s.memory = 4 << 20
	_, err := s.Check(widget())
	want := "lua script argocd-cm resource.customizations.health.example.com_Widget for Widget w1: allocated more than its memory budget of 4 MiB: lua memory budget exceeded"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// The budgeted string functions give what gopher-lua's own give.
func TestLimitedStringFunctions(t *testing.T) {
	exprs := []string{
		`string.rep("ab", 3)`, `string.rep("ab", 0)`, `string.rep("", 5)`, `("x"):rep(2)`,
		`string.format("%5.2f|%-4s|%d|%%", 3.14159, "a", 7)`, `string.format("%s", "plain")`,
		`table.concat({"a", "b", "c"}, ", ")`, `table.concat({1, 2, 3}, "-", 2)`, `table.concat({})`,
		`string.gsub("hello world", "o", "0")`, `string.gsub("hello world", "(%w+)", "<%1>")`,
		`string.gsub("hello world", "%w+", "%0 %0", 1)`, `string.gsub("abc", "", "-")`,
		`string.gsub("$name is $age", "%$(%w+)", {name = "ann", age = 3})`,
		`string.gsub("a b c", "%w", function(c) if c == "b" then return nil end return c:upper() end)`,
		`string.gsub("x = 1, y = 2", "(%w+) = (%w+)", "%2 = %1")`, `string.gsub("100%", "%%", " percent")`,
		`string.gsub("abc", "b", "%%")`, `string.gsub("hello", "l+", function(s) return #s end)`,
		`string.gsub("Ready=True", "()=", "%1")`,
	}
	for _, expr := range exprs {
		t.Run(expr, func(t *testing.T) {
			script := `local a, b = ` + expr + `; return { status = "Healthy", message = tostring(a) .. "|" .. tostring(b) }`
			got := runScript(t, script, false)
			ref := lua.NewState()
			defer ref.Close()
			if err := ref.DoString(script); err != nil {
				t.Fatal(err)
			}
			want := ref.Get(-1).(*lua.LTable).RawGetString("message").String()
			if diff := cmp.Diff(want, got.Message); diff != "" {
				t.Errorf("budgeted result differs from gopher-lua's (-want +got):\n%s", diff)
			}
		})
	}
}
