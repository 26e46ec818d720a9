package health

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLuaHealth runs any script as a health check, with the safe
// libraries: nothing panics, every run ends within its time limit (plus
// slack for a loaded machine), and nothing reaches the host: no file is
// written, no environment changed, no process run.
func FuzzLuaHealth(f *testing.F) {
	canary := filepath.Join(f.TempDir(), "escaped")
	for _, seed := range []string{
		`return { status = "Healthy" }`,
		`if obj.spec.sizes[1] == 1 then return { status = "Progressing", message = obj.metadata.name } end`,
		`os.execute("touch ` + canary + `")`, `io.open("` + canary + `", "w")`, `require("io")`, `require("os").exit(1)`,
		`load("return 1")()`, `loadstring("x = 1")()`, `dofile("/etc/passwd")`, `getfenv(0).os = nil`,
		`string.__index = nil`, `setmetatable(_G, {})`, `local s = "x"; while true do s = s .. s end`,
		`while true do end`, `return { status = string.rep("x", 1e12) }`, `local t = {}; t[1e9] = 1; return t`,
		`os.setenv("WAVECD_FUZZ_CANARY", "changed")`, `return { status = obj }`, `error({})`, `coroutine.wrap(function() end)()`,
	} {
		f.Add(seed)
	}
	t0 := os.Getenv("WAVECD_FUZZ_CANARY")
	f.Fuzz(func(t *testing.T, source string) {
		s := NewScript("fuzz.lua", source, false)
		s.timeout = 100 * time.Millisecond
		s.memory = 16 << 20
		start := time.Now()
		st, err := s.Check(widget())
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("a run took %s, over its limit of %s", took, s.timeout)
		}
		if err == nil && st == nil {
			t.Fatal("no status and no error")
		}
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("the script wrote %s", canary)
		}
		if os.Getenv("WAVECD_FUZZ_CANARY") != t0 {
			t.Fatal("the script changed the environment")
		}
	})
}
