package health

import (
	"encoding/json"

	lua "github.com/yuin/gopher-lua"
)

// toLua converts a value of an unstructured object into a Lua value: maps
// become tables with string keys, lists become arrays, numbers become Lua
// numbers. Tables are created at their final size to keep conversion cheap.
func toLua(L *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case map[string]any:
		tbl := L.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetString(key, toLua(L, item))
		}
		return tbl
	case []any:
		tbl := L.CreateTable(len(v), 0)
		for _, item := range v {
			tbl.Append(toLua(L, item))
		}
		return tbl
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case json.Number:
		return lua.LString(v)
	}
	return lua.LNil
}
