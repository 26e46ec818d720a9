package health

import (
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// safeBaseFunctions are the base library functions a script without open libs
// may call. Loading code (dofile, loadfile, load, loadstring, require, module)
// and reaching other environments (getfenv, setfenv) are left out.
var safeBaseFunctions = []string{
	"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
	"rawequal", "rawget", "rawlen", "rawset", "select", "setmetatable",
	"tonumber", "tostring", "type", "unpack", "xpcall", "_VERSION",
}

// safeLibraries are the libraries a script without open libs gets, with the
// functions of each it may call (nil: all of them).
var safeLibraries = map[string][]string{
	lua.TabLibName:    nil,
	lua.StringLibName: nil,
	lua.MathLibName:   nil,
	lua.OsLibName:     {"time", "clock", "date", "difftime"},
}

// safeState is an interpreter with the safe libraries open. Every run gets a
// fresh global table built from template, so what one script sets or changes
// (globals, library tables) never reaches the next run.
type safeState struct {
	L        *lua.LState
	template []templateEntry
}

// templateEntry is one global of a fresh run: a value, or for a library a
// protected metatable whose __index is the library. Each run gets an empty
// table with that metatable, so reading string.format works while writing
// string.format only changes that run's table. Copying the libraries instead
// would cost more than the rest of a run.
type templateEntry struct {
	name    string
	value   lua.LValue
	libMeta *lua.LTable
}

// statePool hands out safe interpreters and takes back those that ran cleanly.
type statePool struct{ pool sync.Pool }

var safeStates = &statePool{pool: sync.Pool{New: func() any { return newSafeState() }}}

func (p *statePool) get() *safeState  { return p.pool.Get().(*safeState) }
func (p *statePool) put(s *safeState) { p.pool.Put(s) }

func newSafeState() *safeState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, open := range []lua.LGFunction{lua.OpenBase, lua.OpenTable, lua.OpenString, lua.OpenMath, lua.OpenOs} {
		L.Push(L.NewFunction(open))
		L.Call(0, 0)
	}
	limitLibraries(L)
	pristine := L.G.Global
	// gopher-lua's string library is its own __index; a script could reach and
	// change it through string.__index.
	pristine.RawGetString(lua.StringLibName).(*lua.LTable).RawSetString("__index", lua.LNil)
	s := &safeState{L: L}
	for _, name := range safeBaseFunctions {
		s.template = append(s.template, templateEntry{name: name, value: pristine.RawGetString(name)})
	}
	// print stays callable, as scripts use it to debug, but writes nothing:
	// its output would land in the middle of the engine's or the CLI's.
	s.template = append(s.template, templateEntry{name: "print", value: L.NewFunction(func(*lua.LState) int { return 0 })})
	for name, allowed := range safeLibraries {
		lib := restrict(L, pristine.RawGetString(name).(*lua.LTable), allowed)
		s.template = append(s.template, templateEntry{name: name, libMeta: protectedIndex(L, lib)})
	}
	s.template = append(s.template, templateEntry{name: "require", value: L.NewFunction(requireFromEnv)})
	protectStringMethods(L, pristine.RawGetString(lua.StringLibName).(*lua.LTable))
	return s
}

// restrict returns the library table itself, or a new table with only the
// allowed functions of it.
func restrict(L *lua.LState, lib *lua.LTable, allowed []string) *lua.LTable {
	if allowed == nil {
		return lib
	}
	out := L.CreateTable(0, len(allowed))
	for _, name := range allowed {
		out.RawSetString(name, lib.RawGetString(name))
	}
	return out
}

// protectStringMethods gives strings a metatable of their own whose library
// cannot be reached from a script, so s:upper() works but no script can
// change string methods for the next one.
func protectStringMethods(L *lua.LState, stringLib *lua.LTable) {
	methods := L.CreateTable(0, 0)
	stringLib.ForEach(func(k, v lua.LValue) { methods.RawSet(k, v) })
	L.SetMetatable(lua.LString(""), protectedIndex(L, methods))
}

// protectedIndex returns a metatable that reads missing keys from lib and that
// scripts can neither get nor replace, so lib stays out of their reach.
func protectedIndex(L *lua.LState, lib *lua.LTable) *lua.LTable {
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", lib)
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// freshFunction builds new globals from the template, makes them the
// interpreter's globals and returns the script's main function bound to them.
func (s *safeState) freshFunction(proto *lua.FunctionProto) *lua.LFunction {
	L := s.L
	env := L.CreateTable(0, len(s.template)+2)
	for _, e := range s.template {
		if e.libMeta == nil {
			env.RawSetString(e.name, e.value)
			continue
		}
		lib := L.CreateTable(0, 0)
		lib.Metatable = e.libMeta
		env.RawSetString(e.name, lib)
	}
	env.RawSetString("_G", env)
	L.G.Global = env
	L.Env = env
	return L.NewFunctionFromProto(proto)
}

// requireFromEnv lets require("os") and friends return the library the
// script already has, as Argo CD preloads its safe os library for require.
func requireFromEnv(L *lua.LState) int {
	name := L.CheckString(1)
	lib, ok := L.Env.RawGetString(name).(*lua.LTable)
	if !ok || !isSafeLibrary(name) {
		L.RaiseError("module %q is not available to health scripts without useOpenLibs", name)
		return 0
	}
	L.Push(lib)
	return 1
}

func isSafeLibrary(name string) bool {
	_, ok := safeLibraries[name]
	return ok
}

// newOpenState returns an interpreter with all standard libraries, for
// scripts that ask for open libs. It is used for one run only.
func newOpenState() *lua.LState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		RegistrySize:        256,
		RegistryMaxSize:     lua.RegistrySize,
		MinimizeStackMemory: true,
	})
	L.OpenLibs()
	limitLibraries(L)
	return L
}
