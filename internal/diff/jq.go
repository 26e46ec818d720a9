package diff

import (
	"context"
	"encoding/json"
	"fmt"
	stdsync "sync"
	"time"

	"github.com/itchyny/gojq"
)

// toJQ converts an object to the plain JSON values gojq accepts.
func toJQ(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return out, nil
}

// jqTimeout bounds one run of a jq program, as Argo CD's
// controller.ignore.normalizer.jq.timeout does (1s by default): a rule's
// program comes from a user and may never end.
const jqTimeout = time.Second

// runJQ runs program on obj. A program that does not parse is an error, as
// is one that runs past jqTimeout; one that fails on this object (a path
// it does not have) selects nothing.
func runJQ(obj map[string]any, program string) ([]any, error) {
	code, err := compileJQ(program)
	if err != nil {
		return nil, err
	}
	input, err := toJQ(obj)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), jqTimeout)
	defer cancel()
	var out []any
	iter := code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if _, ok := v.(error); ok {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("jq path expression %q: ran longer than %s", program, jqTimeout)
			}
			return nil, nil
		}
		out = append(out, v)
	}
}

// jqPrograms holds compiled jq programs by their text. The rules come
// from settings and run on every comparison of every object they name;
// compiling a program was two thirds of running it. Bounded: the texts
// are few, and a flood of new ones only costs compiling again.
var jqPrograms = struct {
	mu stdsync.Mutex
	m  map[string]*gojq.Code
}{m: map[string]*gojq.Code{}}

const maxJQPrograms = 1024

// compileJQ returns program compiled, from jqPrograms when it is there.
// A compiled program is safe for concurrent runs.
func compileJQ(program string) (*gojq.Code, error) {
	jqPrograms.mu.Lock()
	code, ok := jqPrograms.m[program]
	jqPrograms.mu.Unlock()
	if ok {
		return code, nil
	}
	q, err := gojq.Parse(program)
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", program, err)
	}
	if code, err = gojq.Compile(q); err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", program, err)
	}
	jqPrograms.mu.Lock()
	defer jqPrograms.mu.Unlock()
	if len(jqPrograms.m) >= maxJQPrograms {
		clear(jqPrograms.m)
	}
	jqPrograms.m[program] = code
	return code, nil
}

// jqDelete returns obj with the values expr selects deleted.
func jqDelete(obj map[string]any, expr string) (map[string]any, error) {
	out, err := runJQ(obj, "del("+expr+")")
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return obj, nil
	}
	m, ok := out[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("jq path expression %q did not return an object", expr)
	}
	return m, nil
}

// jqPaths returns the paths expr selects in obj, as pointer segments.
func jqPaths(obj map[string]any, expr string) ([][]string, error) {
	values, err := runJQ(obj, "path("+expr+")")
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, v := range values {
		elems, ok := v.([]any)
		if !ok {
			continue
		}
		path := make([]string, 0, len(elems))
		for _, e := range elems {
			path = append(path, fmt.Sprint(e))
		}
		out = append(out, path)
	}
	return out, nil
}
