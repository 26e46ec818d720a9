package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// manifestFile matches the files a Directory source reads, as Argo CD does.
var manifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

// Directory renders plain manifest folders: YAML and JSON files,
// multi-document, and Jsonnet files (see jsonnetEval), optionally
// recursive, filtered by include and exclude globs matched against the
// path relative to the source path.
type Directory struct{}

// Render implements Renderer.
func (Directory) Render(ctx context.Context, req *Request) (*Result, error) {
	opts := v1alpha1.ApplicationSourceDirectory{}
	if req.Source.Directory != nil {
		opts = *req.Source.Directory
	}
	filter, err := newGlobFilter(opts)
	if err != nil {
		return nil, err
	}
	root, err := appPath(req.Tree, req.Source.Path)
	if err != nil {
		return nil, err
	}
	d := &dirReader{tree: req.Tree, limits: req.limits(), res: &Result{}, anyFile: opts.DisableExtensionFilter}
	d.budget = NewBudget(d.limits.MaxDirectorySize, KeyMaxDirectorySize)
	// jsonnetAt are the .jsonnet files found, and where their objects go.
	var jsonnetAt []int
	var jsonnetFiles []string
	err = fs.WalkDir(req.Tree, root, func(p string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if entry.IsDir() {
			if p != root && !opts.Recurse {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if root == "." {
			rel = p
		}
		if !filter.keep(rel) {
			return nil
		}
		if strings.HasSuffix(p, ".jsonnet") {
			jsonnetAt, jsonnetFiles = append(jsonnetAt, len(d.res.Objects)), append(jsonnetFiles, p)
			return nil
		}
		return d.read(p, entry, opts.Recurse)
	})
	if err != nil {
		return nil, err
	}
	res := d.res
	if err := insertJsonnet(ctx, req, root, res, jsonnetAt, jsonnetFiles, d.budget); err != nil {
		return nil, err
	}
	if err := req.budget().Take("manifests of "+root, d.budget.Used()); err != nil {
		return nil, err
	}
	res.Size = d.budget.Used()
	return res, nil
}

// insertJsonnet evaluates the .jsonnet files found (files) and puts their
// objects into res where each file was found (at), charging what they
// print to budget.
func insertJsonnet(ctx context.Context, req *Request, root string, res *Result, at []int, files []string, budget *Budget) error {
	if len(files) == 0 {
		return nil
	}
	eval, err := newJsonnetEval(req, root)
	if err != nil {
		return err
	}
	perFile, err := eval.objects(ctx, files, budget)
	if err != nil {
		return err
	}
	for i := len(files) - 1; i >= 0; i-- { // from the last, so earlier positions hold
		res.Objects = slices.Insert(res.Objects, at[i], perFile[i]...)
	}
	return nil
}

// dirReader reads the files of one Directory source.
type dirReader struct {
	tree   *source.Tree
	limits Limits
	budget *Budget
	res    *Result
	// anyFile reads every file, not only .yaml, .yml and .json ones
	// (directory.disableExtensionFilter); one of another name that does
	// not parse is skipped with a warning, not an error.
	anyFile bool
}

// read adds the objects of one file to the result. A file that does not
// parse as YAML or JSON is an error naming the file and line, as in Argo
// CD: a render that left it out would prune what it defines. A file that
// parses but holds no Kubernetes object (a values or config file) is
// skipped with a warning, and so is a symlink that is not followed: every
// skip is visible.
func (d *dirReader) read(p string, entry fs.DirEntry, recurse bool) error {
	manifest := manifestFile.MatchString(entry.Name())
	if entry.Type()&fs.ModeSymlink != 0 {
		info, err := d.tree.Stat(p)
		switch {
		case err != nil && manifest:
			return err
		case err != nil:
			d.warn(p, err)
			return nil
		case info.IsDir():
			if recurse {
				d.warn(p, errors.New("a symlink to a folder is not followed"))
			}
			return nil
		}
	}
	if !manifest && !d.anyFile {
		return nil
	}
	// A size known from the folder's index is charged before reading, so
	// an oversized file is refused unread.
	size := int64(-1)
	if info, err := d.tree.Stat(p); err == nil && info.Size() > 0 {
		size = info.Size()
		if err := d.budget.Take(p, size); err != nil {
			return err
		}
	}
	data, err := d.tree.ReadFile(p)
	if err != nil {
		return err
	}
	if size < 0 {
		if err := d.budget.Take(p, int64(len(data))); err != nil {
			return err
		}
	}
	objs, notObject, err := parseFile(p, data, d.limits.MaxManifestSize)
	var parseErr *ParseError
	if err != nil && !manifest && errors.As(err, &parseErr) {
		notObject = parseErr.Err // not named as a manifest: a file of another kind
	} else if err != nil {
		return err
	}
	if notObject != nil {
		d.warn(p, notObject)
		return nil
	}
	d.res.Objects = append(d.res.Objects, objs...)
	return nil
}

func (d *dirReader) warn(p string, err error) {
	d.res.Warnings = append(d.res.Warnings, fmt.Sprintf("skipped %s: %v", p, err))
}

// parseFile parses one file of a Directory source. A document that does
// not parse is an error; so is one that parses but is not a Kubernetes
// object in a file that has objects too. A file of documents that all
// parse and none of which is an object returns notObject, the reason to
// skip it.
func parseFile(file string, data []byte, maxDoc int64) (objs []*unstructured.Unstructured, notObject, err error) {
	values, err := decodeFile(file, data, maxDoc)
	if err != nil {
		return nil, nil, err
	}
	var firstNotObject error
	for _, v := range values {
		u, err := toObject(v.value)
		if err != nil {
			if firstNotObject == nil {
				firstNotObject = &ParseError{File: file, Line: v.line, Err: err}
			}
			continue
		}
		objs = append(objs, u)
	}
	switch {
	case firstNotObject != nil && len(objs) > 0:
		return nil, nil, firstNotObject
	case firstNotObject != nil:
		return nil, errors.Unwrap(firstNotObject), nil
	}
	return objs, nil, nil
}

// decoded is one value of a file and the line it starts on (0: unknown).
type decoded struct {
	value any
	line  int
}

// decodeFile decodes every document of a YAML stream, or the items of a
// JSON array; the first syntax error is returned with its line.
func decodeFile(file string, data []byte, maxDoc int64) ([]decoded, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var items []any
		if err := utiljson.Unmarshal(t, &items); err != nil {
			return nil, &ParseError{File: file, Line: jsonErrorLine(data), Err: err}
		}
		out := make([]decoded, len(items))
		for i, it := range items {
			out[i] = decoded{value: it}
		}
		return out, nil
	}
	docs, err := splitDocuments(file, data, maxDoc)
	if err != nil {
		return nil, err
	}
	out := make([]decoded, 0, len(docs))
	for _, doc := range docs {
		v, err := decodeDocument(file, doc)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, decoded{value: v, line: doc.line})
		}
	}
	return out, nil
}

// jsonErrorLine is the line of the first JSON syntax error in data (0:
// unknown).
func jsonErrorLine(data []byte) int {
	var syn *json.SyntaxError
	if !errors.As(json.Unmarshal(data, new(any)), &syn) {
		return 0
	}
	off := min(int(syn.Offset), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// globFilter applies a Directory source's include and exclude globs.
type globFilter struct {
	include, exclude glob.Glob
}

func newGlobFilter(opts v1alpha1.ApplicationSourceDirectory) (*globFilter, error) {
	f := &globFilter{}
	var err error
	if opts.Include != "" {
		if f.include, err = glob.Compile(opts.Include); err != nil {
			return nil, fmt.Errorf("field directory.include: bad glob %q: %w", opts.Include, err)
		}
	}
	if opts.Exclude != "" {
		if f.exclude, err = glob.Compile(opts.Exclude); err != nil {
			return nil, fmt.Errorf("field directory.exclude: bad glob %q: %w", opts.Exclude, err)
		}
	}
	return f, nil
}

func (f *globFilter) keep(rel string) bool {
	rel = path.Clean(rel)
	if f.exclude != nil && f.exclude.Match(rel) {
		return false
	}
	return f.include == nil || f.include.Match(rel)
}
