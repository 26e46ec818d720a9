package appset

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// git yields one parameter set per matching directory, or per object of
// each matching JSON or YAML file, of the repository at the revision.
func (g *generation) git(gg *v1alpha1.GitGenerator, parent params) ([]params, error) {
	g.noteRequeue(requeueOr(gg.RequeueAfterSeconds, g.in.GitRequeue))
	switch {
	case len(gg.Directories) > 0 && len(gg.Files) > 0:
		return nil, errors.New("set either directories or files, not both")
	case len(gg.Directories) == 0 && len(gg.Files) == 0:
		return nil, errors.New("set directories or files")
	}
	tree, err := g.checkout(gg.RepoURL, gg.Revision)
	if err != nil {
		return nil, err
	}
	var sets []params
	if len(gg.Directories) > 0 {
		dirs, err := matchDirectories(tree, gg.Directories)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			sets = append(sets, g.pathParams(d, "", gg.PathParamPrefix))
		}
	} else if sets, err = g.fileParams(tree, gg); err != nil {
		return nil, err
	}
	for _, p := range sets {
		if err := appendValues(p, gg.Values, parent, g.r); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

func (g *generation) checkout(repoURL, revision string) (*source.Tree, error) {
	if g.in.Repos == nil {
		return nil, errors.New("no repository access configured")
	}
	key := repoURL + "@" + revision
	if t, ok := g.trees[key]; ok {
		return t, nil
	}
	t, err := g.in.Repos.Checkout(g.ctx, repoURL, revision)
	if err != nil {
		return nil, err
	}
	g.trees[key] = t
	return t, nil
}

// matchDirectories lists the tree's directories (not following symlinks,
// skipping every directory whose name starts with '.') that match an
// include pattern and no exclude pattern (path.Match).
func matchDirectories(tree *source.Tree, items []v1alpha1.GitDirectoryGeneratorItem) ([]string, error) {
	for _, it := range items {
		if _, err := path.Match(it.Path, ""); err != nil {
			return nil, fmt.Errorf("directories: path %q: %w", it.Path, err)
		}
	}
	var out []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		include, exclude := false, false
		for _, it := range items {
			if ok, _ := path.Match(it.Path, p); ok {
				include, exclude = include || !it.Exclude, exclude || it.Exclude
			}
		}
		if include && !exclude {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list directories: %w", err)
	}
	return out, nil
}

// fileParams parses every matching file. A file holds one object or a list
// of them; each is one parameter set.
func (g *generation) fileParams(tree *source.Tree, gg *v1alpha1.GitGenerator) ([]params, error) {
	files, err := matchFiles(tree, gg.Files, g.in.NewGitFileGlobbing)
	if err != nil {
		return nil, err
	}
	var out []params
	for _, f := range files {
		raw, err := tree.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		objs, err := parseObjects(raw)
		if err != nil {
			return nil, fmt.Errorf("unable to process file '%s': %w", f, err)
		}
		for _, obj := range objs {
			p := g.elementParams(obj)
			for k, v := range g.pathParams(path.Dir(f), path.Base(f), gg.PathParamPrefix) {
				p[k] = v
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// parseObjects reads a JSON or YAML object, or a list of objects. An empty
// file is one empty object.
func parseObjects(raw []byte) ([]map[string]any, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	tree, err := decodeTree(js)
	if err != nil {
		return nil, err
	}
	switch v := tree.(type) {
	case nil:
		return []map[string]any{{}}, nil
	case map[string]any:
		return []map[string]any{v}, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for i, x := range v {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d is not an object", i)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, errors.New("the file holds neither an object nor a list of objects")
}

// matchFiles lists the files (symlinks inside the tree included) matching
// an include pattern and no exclude pattern, sorted.
func matchFiles(tree *source.Tree, items []v1alpha1.GitFileGeneratorItem, newGlobbing bool) ([]string, error) {
	type pattern struct {
		g       glob.Glob
		exclude bool
	}
	var pats []pattern
	for _, it := range items {
		gl, err := compileFileGlob(it.Path, newGlobbing)
		if err != nil {
			return nil, fmt.Errorf("files: path %q: %w", it.Path, err)
		}
		pats = append(pats, pattern{gl, it.Exclude})
	}
	var out []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		include, exclude := false, false
		for _, pat := range pats {
			if pat.g.Match(p) {
				include, exclude = include || !pat.exclude, exclude || pat.exclude
			}
		}
		if !include || exclude {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// A symlink to a directory is no file; one that leaves the
			// repository is an error when read.
			if info, err := tree.Stat(p); err == nil && info.IsDir() {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// compileFileGlob compiles a files generator path. By default `*` also
// matches '/' (git's pathspec globbing, Argo CD's default); with
// newGlobbing `*` stays in one segment and `**/` matches any number of
// directories, none included.
func compileFileGlob(pattern string, newGlobbing bool) (glob.Glob, error) {
	if !newGlobbing {
		return glob.Compile(pattern)
	}
	pattern = strings.ReplaceAll(pattern, "/**/", "/{,**/}")
	if rest, ok := strings.CutPrefix(pattern, "**/"); ok {
		pattern = "{,**/}" + rest
	}
	return glob.Compile(pattern, '/')
}

// pathParams are the `path` parameters of a directory (file empty) or of a
// file in directory dir.
func (g *generation) pathParams(dir, file, prefix string) params {
	segments := strings.Split(dir, "/")
	base := path.Base(dir)
	if g.r.goTemplate {
		pp := map[string]any{"path": dir, "basename": base, "basenameNormalized": normalize(base), "segments": segments}
		if file != "" {
			pp["filename"], pp["filenameNormalized"] = file, normalize(file)
		}
		if prefix != "" {
			return params{prefix: map[string]any{"path": pp}}
		}
		return params{"path": pp}
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	p := params{name: dir, name + ".basename": base, name + ".basenameNormalized": normalize(base)}
	if file != "" {
		p[name+".filename"], p[name+".filenameNormalized"] = file, normalize(file)
	}
	for i, s := range segments {
		if s != "" {
			p[name+"["+strconv.Itoa(i)+"]"] = s
		}
	}
	return p
}
