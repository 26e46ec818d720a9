package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	res := &Result{}
	// jsonnetAt are the .jsonnet files found, and where their objects go.
	var jsonnetAt []int
	var jsonnetFiles []string
	err = fs.WalkDir(req.Tree, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && !opts.Recurse {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if root == "." {
			rel = p
		}
		if !opts.DisableExtensionFilter && !manifestFile.MatchString(d.Name()) || !filter.keep(rel) {
			return nil
		}
		if strings.HasSuffix(p, ".jsonnet") {
			jsonnetAt, jsonnetFiles = append(jsonnetAt, len(res.Objects)), append(jsonnetFiles, p)
			return nil
		}
		return readManifestFile(req.Tree, p, d, res)
	})
	if err != nil {
		return nil, err
	}
	if len(jsonnetFiles) == 0 {
		return res, nil
	}
	eval, err := newJsonnetEval(req, root)
	if err != nil {
		return nil, err
	}
	perFile, err := eval.objects(ctx, jsonnetFiles)
	if err != nil {
		return nil, err
	}
	for i := len(jsonnetFiles) - 1; i >= 0; i-- { // from the last, so earlier positions hold
		res.Objects = slices.Insert(res.Objects, jsonnetAt[i], perFile[i]...)
	}
	return res, nil
}

// readManifestFile adds the objects of one file to res. A file that has no
// Kubernetes object in it and does not look like one is skipped with a
// warning (it is probably a values or config file); a file that mixes
// objects with broken documents is an error, as in Argo CD.
func readManifestFile(tree *source.Tree, p string, d fs.DirEntry, res *Result) error {
	if d.Type()&fs.ModeSymlink != 0 {
		info, err := tree.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
	}
	data, err := tree.ReadFile(p)
	if err != nil {
		return err
	}
	objs, err := parseLenient(p, data)
	if err == nil {
		res.Objects = append(res.Objects, objs...)
		return nil
	}
	if len(objs) > 0 || looksLikeManifest(data) {
		return err
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("skipped %s: %v", p, errors.Unwrap(err)))
	return nil
}

// parseLenient parses like parseManifests but returns the objects it could
// decode along with the first error.
func parseLenient(file string, data []byte) ([]*unstructured.Unstructured, error) {
	if t := strings.TrimSpace(string(data)); strings.HasPrefix(t, "[") {
		return parseJSONArray(file, []byte(t))
	}
	var out []*unstructured.Unstructured
	var first error
	for _, doc := range splitDocuments(data) {
		v, err := decodeDocument(file, doc)
		if err == nil && v == nil {
			continue
		}
		var u *unstructured.Unstructured
		if err == nil {
			u, err = toObject(v)
			if err != nil {
				err = &ParseError{File: file, Line: doc.line, Err: err}
			}
		}
		if err != nil {
			first = cmpFirst(first, err)
			continue
		}
		out = append(out, u)
	}
	return out, first
}

func cmpFirst(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// looksLikeManifest is Argo CD's test for a broken manifest (as opposed to
// an unrelated YAML file).
func looksLikeManifest(data []byte) bool {
	s := string(data)
	return strings.Contains(s, "apiVersion:") && strings.Contains(s, "kind:") && strings.Contains(s, "metadata:")
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
