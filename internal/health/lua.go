package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LuaTimeout is how long one run of a Lua health script may take.
const LuaTimeout = time.Second

// invalidHealthStatus is Argo CD's message for a script that returns a status
// outside the six codes; users search for it.
const invalidHealthStatus = "Lua returned an invalid health status"

// Script is a Lua health script compiled once and run for many objects. Its
// zero value is not usable; build one with [CompileScript].
type Script struct {
	// Name says where the script comes from, for messages.
	Name string
	// OpenLibs gives the script all of Lua's standard libraries instead of
	// the safe set.
	OpenLibs bool

	source     string
	timeout    time.Duration
	memory     uint64 // bytes a run may allocate; 0: LuaMemoryLimit
	once       sync.Once
	proto      *lua.FunctionProto
	compileErr error
}

// NewScript returns a script for source. It is compiled once, on first use, so
// loading a large library stays cheap. A script that does not compile still
// works as a check: every run of it reports the compile error, so one broken
// customization makes its kind Unknown instead of stopping the engine.
func NewScript(name, source string, openLibs bool) *Script {
	return &Script{Name: name, OpenLibs: openLibs, source: source, timeout: LuaTimeout}
}

// Err compiles the script if that has not happened yet and returns the
// compile error, if any.
func (s *Script) Err() error {
	s.once.Do(func() {
		chunk, err := parse.Parse(strings.NewReader(s.source), s.Name)
		if err == nil {
			s.proto, err = lua.Compile(chunk, s.Name)
		}
		if err != nil {
			s.compileErr = &ScriptError{Problem: "lua script does not compile", Err: err}
		}
	})
	return s.compileErr
}

// Check runs the script for obj. The script sees the object as the global obj
// and returns a table {status = ..., message = ...}.
func (s *Script) Check(obj *unstructured.Unstructured) (*Status, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	if s.OpenLibs {
		L := newOpenState()
		defer L.Close()
		return s.run(L, L.NewFunctionFromProto(s.proto), obj)
	}
	st := safeStates.get()
	result, err := s.run(st.L, st.freshFunction(s.proto), obj)
	if err != nil {
		st.L.Close() // a failed run may leave the interpreter in any state
	} else {
		safeStates.put(st)
	}
	return result, err
}

func (s *Script) run(L *lua.LState, fn *lua.LFunction, obj *unstructured.Unstructured) (*Status, error) {
	L.SetGlobal("obj", toLua(L, obj.Object))
	// gopher-lua stops a script only through a context. This one bounds the
	// CPU and the memory a script may take; it is not the caller's
	// cancellation, which a health check (no I/O, at most one second) does
	// not need.
	timeout, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	ctx := newLuaBudget(timeout, s.memoryLimit())
	L.SetContext(ctx)
	defer L.RemoveContext()
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		switch {
		case ctx.refused != "":
			return nil, fmt.Errorf("lua script %s for %s: %s, over its memory budget of %d MiB: %w",
				s.Name, describeObject(obj), ctx.refused, s.memoryLimit()>>20, errLuaMemory)
		case ctx.exceeded:
			return nil, fmt.Errorf("lua script %s for %s: allocated more than its memory budget of %d MiB: %w",
				s.Name, describeObject(obj), s.memoryLimit()>>20, errLuaMemory)
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("lua script %s for %s did not finish within %s: %w", s.Name, describeObject(obj), s.timeout, ctx.Err())
		}
		return nil, &ScriptError{Problem: "lua script failed", Err: err}
	}
	ret := L.Get(-1)
	L.Pop(1)
	return decodeResult(ret)
}

func (s *Script) memoryLimit() uint64 {
	if s.memory > 0 {
		return s.memory
	}
	return LuaMemoryLimit
}

// describeObject names an object in messages: Kind namespace/name.
func describeObject(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}

// decodeResult turns the script's return value into a Status, the way Argo
// CD reads it.
func decodeResult(ret lua.LValue) (*Status, error) {
	tbl, ok := ret.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	code, _ := tbl.RawGetString("status").(lua.LString)
	if !Code(code).Valid() {
		return &Status{Status: Unknown, Message: invalidHealthStatus}, nil
	}
	var message string
	switch m := tbl.RawGetString("message").(type) {
	case lua.LString:
		message = string(m)
	case *lua.LNilType:
	default:
		return nil, fmt.Errorf("lua health check returned a message of type %s, not a string", m.Type())
	}
	return &Status{Status: Code(code), Message: message}, nil
}

// ScriptError is a Lua script that failed to compile or to run. Its message
// is gopher-lua's, which names the script and line, without the traceback.
type ScriptError struct {
	Problem string
	Err     error
}

func (e *ScriptError) Error() string {
	msg, _, _ := strings.Cut(e.Err.Error(), "\nstack traceback:")
	return e.Problem + ": " + strings.Join(strings.Fields(msg), " ")
}

func (e *ScriptError) Unwrap() error { return e.Err }
