package health

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// libraryScript is the file name of a health script in a library.
const libraryScript = "health.lua"

// Library is a directory of Lua health checks in Argo CD's
// resource_customizations layout: <group>/<Kind>/health.lua, or <Kind>/health.lua
// for the core group, where "_" in a folder name is a wildcard
// (_.crossplane.io/_). Scripts get the safe set of Lua libraries, which holds
// all that Argo CD's bundled checks use (string, table, math, os.time and
// os.date); argocd-cm's resource.customizations.useOpenLibs.<group>_<Kind>
// gives a library script all libraries. A library may come from Git, so it is
// not trusted with io or os.execute by default, unlike Argo CD's bundled
// scripts, which are compiled into its binary.
type Library struct {
	Dir     string
	scripts scriptSet
}

// LoadLibrary reads every health.lua of the library at dir. Scripts are
// compiled on first use and named by their path inside dir
// (example.com/Widget/health.lua), which messages about them quote.
func LoadLibrary(dir string) (*Library, error) {
	lib := &Library{Dir: dir}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != libraryScript {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) > 2 || rel == "." {
			return nil // actions, test data and other files of the layout
		}
		source, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		key := strings.ReplaceAll(strings.Join(parts, "/"), "_", "*")
		name := strings.Join(parts, "/") + "/" + libraryScript
		lib.scripts.add(key, NewScript(name, string(source), false))
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("customizations library %s: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read customizations library %s: %w", dir, err)
	}
	return lib, nil
}

// Len returns the number of health scripts in the library.
func (l *Library) Len() int { return l.scripts.len() }
