package health

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func widget() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w1", "generation": int64(4)},
		"spec":       map[string]any{"sizes": []any{int64(1), 2.5, "three", true, nil}},
	}}
}

func runScript(t *testing.T, source string, openLibs bool) Status {
	t.Helper()
	st, err := NewScript("test.lua", source, openLibs).Check(widget())
	if err != nil {
		return Status{Status: Unknown, Message: err.Error()}
	}
	return *st
}

func TestLuaScripts(t *testing.T) {
	tests := map[string]struct {
		source   string
		openLibs bool
		want     Status
	}{
		"sees the object": {
			source: `return { status = "Healthy", message = obj.kind .. " " .. obj.metadata.name .. " gen " .. obj.metadata.generation }`,
			want:   Status{Healthy, "Widget w1 gen 4"},
		},
		"sees lists and scalars": {
			source: `local s = obj.spec.sizes
return { status = "Healthy", message = #s .. " " .. s[1] .. " " .. s[2] .. " " .. s[3] .. " " .. tostring(s[4]) }`,
			want: Status{Healthy, "4 1 2.5 three true"},
		},
		"message may be absent": {
			source: `return { status = "Suspended" }`,
			want:   Status{Status: Suspended},
		},
		"safe libraries are open": {
			source: `local t = {}
table.insert(t, string.format("%d", math.floor(2.7)))
table.insert(t, ("abc"):upper())
table.insert(t, type(os.time()))
table.insert(t, type(os.date("!%Y")))
table.insert(t, type(os.clock()))
table.insert(t, type(require("os").time))
return { status = "Healthy", message = table.concat(t, ",") }`,
			want: Status{Healthy, "2,ABC,number,string,number,function"},
		},
		"unsafe functions are closed": {
			source: `local open = {}
for _, name in ipairs({"dofile", "loadfile", "load", "loadstring", "getfenv", "setfenv", "module", "io", "debug", "package", "coroutine", "channel"}) do
  if _G[name] ~= nil then table.insert(open, name) end
end
for _, name in ipairs({"execute", "exit", "getenv", "remove", "rename", "setenv", "tmpname"}) do
  if os[name] ~= nil then table.insert(open, "os." .. name) end
end
return { status = "Healthy", message = table.concat(open, ",") }`,
			want: Status{Status: Healthy},
		},
		"require refuses other modules": {
			source: `local io = require("io")`,
			want:   Status{Unknown, `lua script failed: test.lua:1: module "io" is not available to health scripts without useOpenLibs`},
		},
		"open libs give everything": {
			source:   `return { status = "Healthy", message = type(io.write) .. " " .. type(coroutine.wrap) .. " " .. type(os.getenv) }`,
			openLibs: true,
			want:     Status{Healthy, "function function function"},
		},
		"script needing open libs without them": {
			source: `return { status = coroutine.wrap(function() end) }`,
			want:   Status{Unknown, "lua script failed: test.lua:1: attempt to index a non-table object(nil) with key 'wrap'"},
		},
		"library tables are protected": {
			source: `return { status = "Healthy", message = tostring(getmetatable("")) .. " " .. tostring(("").__index) .. " " ..
  tostring(string.__index) .. " " .. tostring(getmetatable(string)) .. " " .. tostring(pcall(setmetatable, math, {})) }`,
			want: Status{Healthy, "false nil nil false false"},
		},
		"syntax error": {
			source: `return {`,
			want:   Status{Unknown, "lua script does not compile: test.lua at EOF: syntax error"},
		},
		"runtime error": {
			source: `error("no status for you")`,
			want:   Status{Unknown, "lua script failed: test.lua:1: no status for you"},
		},
		"invalid status": {
			source: `return { status = "Fine" }`,
			want:   Status{Unknown, "Lua returned an invalid health status"},
		},
		"status of the wrong type": {
			source: `return { status = 1 }`,
			want:   Status{Unknown, "Lua returned an invalid health status"},
		},
		"message of the wrong type": {
			source: `return { status = "Healthy", message = 42 }`,
			want:   Status{Unknown, "lua health check returned a message of type number, not a string"},
		},
		"nil return": {
			source: `local x = 1`,
			want:   Status{Unknown, "expect table output from Lua script, not nil"},
		},
		"string return": {
			source: `return "Healthy"`,
			want:   Status{Unknown, "expect table output from Lua script, not string"},
		},
		"endless recursion": {
			source: `local function f() return f() + 1 end
return f()`,
			want: Status{Unknown, "lua script failed: test.lua:1: stack overflow"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runScript(t, tc.source, tc.openLibs)); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLuaRunsDoNotShareState runs a script that changes globals and library
// tables many times on the pooled interpreters: every run must see a fresh world.
func TestLuaRunsDoNotShareState(t *testing.T) {
	script := NewScript("leaky.lua", `
local seen = tostring(counter) .. " " .. type(string.extra) .. " " .. type(string.upper) .. " " .. type(table.insert) .. " " .. type(_G.print) .. " " .. ("x"):upper()
counter = (counter or 0) + 1
string.upper = nil
string.extra = "left behind"
table.insert = nil
os.time = nil
_G.print = nil
rawset(_G, "tostring", nil)
return { status = "Healthy", message = seen }`, false)
	want := Status{Healthy, "nil nil function function function X"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				st, err := script.Check(widget())
				if err != nil {
					t.Error(err)
					return
				}
				if diff := cmp.Diff(want, *st); diff != "" {
					t.Errorf("state leaked between runs (-want +got):\n%s", diff)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLuaTimeout(t *testing.T) {
	tests := map[string]bool{"safe libraries": false, "open libraries": true}
	for name, openLibs := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewScript("spin.lua", `while true do end`, openLibs)
			s.timeout = 50 * time.Millisecond
			start := time.Now()
			_, err := s.Check(widget())
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("run took %s, want it stopped after 50ms", elapsed)
			}
			want := "lua script spin.lua for Widget w1 did not finish within 50ms: context deadline exceeded"
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %q", err, want)
			}
			// The pool must still hand out working interpreters.
			if got := runScript(t, `return { status = "Healthy" }`, openLibs); got.Status != Healthy {
				t.Errorf("run after a timeout = %+v, want Healthy", got)
			}
		})
	}
}

func TestLuaTestSuite(t *testing.T) {
	clock := "testdata/lua/example.com/Clock/health_test.yaml"
	tests := map[string]struct {
		settings   map[string]string
		wantFailed []string // files of the failing tests
	}{
		"with useOpenLibs for the check that needs it": {
			settings: map[string]string{KeyOpenLibsPrefix + "example.com_Clock": "true"},
		},
		"library scripts get the safe libraries by default": {
			wantFailed: []string{clock},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := newTestAssessor(t, Options{LibraryDir: "testdata/lua", Settings: tc.settings})
			results, err := a.RunTests(t.Context(), "testdata/lua")
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 14 {
				t.Errorf("ran %d tests, want 14", len(results))
			}
			var failed []string
			for _, r := range results {
				if !r.Passed() {
					failed = append(failed, r.File)
				}
			}
			if diff := cmp.Diff(tc.wantFailed, failed); diff != "" {
				t.Errorf("failed tests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
