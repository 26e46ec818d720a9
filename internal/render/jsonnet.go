package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// jsonnetTimeout bounds the evaluation of one .jsonnet file. go-jsonnet
// cannot be interrupted: an evaluation that times out is abandoned and
// reported, and its goroutine ends when the evaluation does.
const jsonnetTimeout = 60 * time.Second

// jsonnetEval evaluates the .jsonnet files of a Directory source the way
// Argo CD's repo-server does: one VM per file, top-level arguments and
// external variables from directory.jsonnet with the build environment
// ($ARGOCD_APP_NAME, ...) expanded in their values, and imports looked up
// next to the importing file, then in the libs (the last first), then in
// the source's folder. Every import is read through the Tree, so it cannot
// leave the repository.
type jsonnetEval struct {
	tree    *source.Tree
	appDir  string
	opts    v1alpha1.ApplicationSourceJsonnet
	env     v1alpha1.Env
	timeout time.Duration
}

func newJsonnetEval(req *Request, appDir string) (*jsonnetEval, error) {
	j := &jsonnetEval{tree: req.Tree, appDir: appDir, env: BuildEnv(req), timeout: jsonnetTimeout}
	if req.Source.Directory != nil {
		j.opts = req.Source.Directory.Jsonnet
	}
	for i, lib := range j.opts.Libs {
		joined, err := source.Join(".", lib, source.JoinOptions{AbsoluteFromRoot: true})
		if err != nil {
			return nil, fmt.Errorf("field directory.jsonnet.libs[%d]: %w", i, err)
		}
		if _, err := req.Tree.Resolve(joined); err != nil {
			var pe *source.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("field directory.jsonnet.libs[%d]: %w", i, &source.PathError{Path: lib, Reason: pe.Reason})
			}
		}
	}
	return j, nil
}

// vm returns a VM set up for one file.
func (j *jsonnetEval) vm() *jsonnet.VM {
	vm := jsonnet.MakeVM()
	for _, v := range j.opts.TLAs {
		if val := j.env.Envsubst(v.Value); v.Code {
			vm.TLACode(v.Name, val)
		} else {
			vm.TLAVar(v.Name, val)
		}
	}
	for _, v := range j.opts.ExtVars {
		if val := j.env.Envsubst(v.Value); v.Code {
			vm.ExtCode(v.Name, val)
		} else {
			vm.ExtVar(v.Name, val)
		}
	}
	jpaths := []string{j.appDir}
	for _, lib := range j.opts.Libs {
		joined, _ := source.Join(".", lib, source.JoinOptions{AbsoluteFromRoot: true}) // checked by newJsonnetEval
		jpaths = append(jpaths, joined)
	}
	vm.Importer(&treeImporter{tree: j.tree, jpaths: jpaths, cache: map[string]*importEntry{}})
	return vm
}

// evaluate returns the JSON text file evaluates to: what `jsonnet -J
// <source path> -J <lib>... --tla-str/--tla-code/--ext-str/--ext-code ...
// file` prints.
func (j *jsonnetEval) evaluate(ctx context.Context, file string) (string, error) {
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	vm := j.vm()
	go func() {
		out, err := vm.EvaluateFile(file)
		done <- result{out, err}
	}()
	timer := time.NewTimer(j.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return "", fmt.Errorf("%s: evaluate jsonnet: %w", file, r.err)
		}
		return r.out, nil
	case <-timer.C:
		return "", fmt.Errorf("%s: evaluate jsonnet: still running after %s", file, j.timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// objects evaluates files (in a child process when EnableJsonnetChild was
// called, else here) and returns each file's objects. Like Argo CD it
// accepts an object or an array of objects (null items are skipped);
// nested arrays are flattened and List objects are expanded by the engine.
func (j *jsonnetEval) objects(ctx context.Context, files []string, budget *Budget) ([][]*unstructured.Unstructured, error) {
	outs, err := j.evaluateAll(ctx, files)
	if err != nil {
		return nil, err
	}
	perFile := make([][]*unstructured.Unstructured, len(files))
	for i, file := range files {
		// Generated manifests count like files read: a small program can
		// print a huge document.
		if err := budget.Take(file+" (jsonnet output)", int64(len(outs[i]))); err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal([]byte(outs[i]), &v); err != nil {
			return nil, &ParseError{File: file, Err: fmt.Errorf("jsonnet output: %w", err)}
		}
		if err := collectJSONObjects(file, "", v, &perFile[i]); err != nil {
			return nil, err
		}
	}
	return perFile, nil
}

// evaluateAll returns the JSON text of each file.
func (j *jsonnetEval) evaluateAll(ctx context.Context, files []string) ([]string, error) {
	if binary := jsonnetChildBinary(); binary != "" {
		return j.evaluateInChild(ctx, binary, files)
	}
	outs := make([]string, len(files))
	for i, file := range files {
		out, err := j.evaluate(ctx, file)
		if err != nil {
			return nil, err
		}
		outs[i] = out
	}
	return outs, nil
}

func collectJSONObjects(file, at string, v any, out *[]*unstructured.Unstructured) error {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		for i, item := range t {
			if err := collectJSONObjects(file, fmt.Sprintf("%s[%d]", at, i), item, out); err != nil {
				return err
			}
		}
		return nil
	}
	u, err := toObject(v)
	if err != nil {
		if at != "" {
			err = fmt.Errorf("item %s: %w", at, err)
		}
		return &ParseError{File: file, Err: err}
	}
	*out = append(*out, u)
	return nil
}

// treeImporter resolves Jsonnet imports inside a Tree, as go-jsonnet's
// FileImporter does on disk: relative to the importing file, then in
// jpaths from the last to the first. An absolute path, a path that
// climbs out of the repository or a symlink out of it is an error.
type treeImporter struct {
	tree   *source.Tree
	jpaths []string
	cache  map[string]*importEntry
}

type importEntry struct {
	contents jsonnet.Contents
	exists   bool
}

// Import implements jsonnet.Importer.
func (t *treeImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	dirs := append([]string{path.Dir(importedFrom)}, reversed(t.jpaths)...)
	if importedFrom == "" {
		dirs[0] = "."
	}
	for _, dir := range dirs {
		found, contents, at, err := t.try(dir, importedPath)
		if err != nil {
			return jsonnet.Contents{}, "", err
		}
		if found {
			return contents, at, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("couldn't open import %q: no match locally or in the Jsonnet library paths", importedPath)
}

func (t *treeImporter) try(dir, importedPath string) (bool, jsonnet.Contents, string, error) {
	p, err := source.Join(dir, importedPath, source.JoinOptions{})
	if err != nil {
		return false, jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
	}
	if e, ok := t.cache[p]; ok {
		return e.exists, e.contents, p, nil
	}
	data, err := t.tree.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.cache[p] = &importEntry{}
		return false, jsonnet.Contents{}, p, nil
	case err != nil:
		var pe *source.PathError
		if errors.As(err, &pe) {
			return false, jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, &source.PathError{Path: importedPath, Reason: pe.Reason})
		}
		return false, jsonnet.Contents{}, "", fmt.Errorf("import %q: %w", importedPath, err)
	}
	e := &importEntry{contents: jsonnet.MakeContentsRaw(data), exists: true}
	t.cache[p] = e
	return true, e.contents, p, nil
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
