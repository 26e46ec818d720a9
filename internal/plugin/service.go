package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"

	"github.com/wavecd/wavecd/internal/source"
)

// Request is one source handed to a plugin.
type Request struct {
	// AppPath is the source's path inside the repository.
	AppPath string `json:"appPath"`
	// Env are the variables Argo CD gives the plugin (see Environ).
	Env []string `json:"env"`
}

// Service runs one plugin's commands on copies of repositories; it is
// what a cmp-server sidecar serves and what a Set runs in process.
type Service struct {
	Config *Config
	// BaseEnv is the environment besides the request's variables.
	BaseEnv []string
	Limits  Limits
	// WorkDir holds each run's folder (default: the system's temp folder).
	WorkDir string
}

// workspace is one run's throwaway folder: the repository copy and a
// TMPDIR, removed when the run ends.
type workspace struct {
	dir, repo, app string
}

func (s *Service) open(req *Request, repo io.Reader) (*workspace, error) {
	rel, err := source.Join(".", req.AppPath, source.JoinOptions{})
	if err != nil {
		return nil, fmt.Errorf("field path: %w", err)
	}
	dir, err := os.MkdirTemp(s.WorkDir, "wavecd-plugin-")
	if err != nil {
		return nil, fmt.Errorf("plugin work folder: %w", err)
	}
	ws := &workspace{dir: dir, repo: filepath.Join(dir, "repo"), app: filepath.Join(dir, "repo", filepath.FromSlash(rel))}
	for _, d := range []string{ws.repo, filepath.Join(dir, "tmp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			ws.close()
			return nil, fmt.Errorf("plugin work folder: %w", err)
		}
	}
	if err := unpack(repo, ws.repo, s.Config.Spec.PreserveFileMode, s.Limits.withDefaults().MaxSource); err != nil {
		ws.close()
		return nil, err
	}
	return ws, nil
}

func (ws *workspace) close() { _ = os.RemoveAll(ws.dir) }

func (s *Service) runner(ws *workspace, req *Request) *runner {
	env := append(append([]string{}, s.BaseEnv...), "TMPDIR="+filepath.Join(ws.dir, "tmp"))
	return &runner{plugin: s.Config.Name(), dir: ws.app, env: append(env, req.Env...), limits: s.Limits.withDefaults()}
}

// Generate runs init (when set) and generate in a copy of the repository,
// in the source's folder, and returns what generate printed.
func (s *Service) Generate(ctx context.Context, req *Request, repo io.Reader) (string, error) {
	ws, err := s.open(req, repo)
	if err != nil {
		return "", err
	}
	defer ws.close()
	r := s.runner(ws, req)
	if len(s.Config.Spec.Init.Command) > 0 {
		if _, err := r.run(ctx, "init", s.Config.Spec.Init); err != nil {
			return "", err
		}
	}
	return r.run(ctx, "generate", s.Config.Spec.Generate)
}

// Match reports whether the plugin's discovery rules accept the source:
// fileName (a glob in the source's folder), else find.glob (`**` crosses
// folders), else find.command (non-empty output). discovery is false for
// a plugin without rules.
func (s *Service) Match(ctx context.Context, req *Request, repo io.Reader) (supported, discovery bool, err error) {
	if !s.Config.HasDiscovery() {
		return false, false, nil
	}
	ws, err := s.open(req, repo)
	if err != nil {
		return false, true, err
	}
	defer ws.close()
	if supported, byName, err := s.Config.matchFiles(os.DirFS(ws.app)); byName {
		return supported, true, err
	}
	out, err := s.runner(ws, req).run(ctx, "discover", s.Config.Spec.Discover.Find.Command)
	if err != nil {
		return false, true, err
	}
	return out != "", true, nil
}

// matchFiles applies discover.fileName (a glob in the source's folder),
// else discover.find.glob, to the files of the source's folder app.
// byName is false when the plugin discovers by command instead.
func (c *Config) matchFiles(app fs.FS) (supported, byName bool, err error) {
	d := c.Spec.Discover
	switch {
	case d.FileName != "":
		matches, err := fs.Glob(app, d.FileName)
		if err != nil {
			return false, true, fmt.Errorf("plugin %s: discover.fileName %q: %w", c.Name(), d.FileName, err)
		}
		return len(matches) > 0, true, nil
	case d.Find.Glob != "":
		ok, err := globMatches(app, d.Find.Glob)
		if err != nil {
			return false, true, fmt.Errorf("plugin %s: discover.find.glob %q: %w", c.Name(), d.Find.Glob, err)
		}
		return ok, true, nil
	}
	return false, false, nil
}

// globMatches reports whether a path under app matches pattern, where `*`
// stays in one folder and `**/` stands for any number of folders
// (none included).
func globMatches(app fs.FS, pattern string) (bool, error) {
	var globs []glob.Glob
	for _, p := range []string{pattern, strings.ReplaceAll(pattern, "**/", "")} {
		g, err := glob.Compile(strings.TrimPrefix(p, "./"), '/')
		if err != nil {
			return false, err
		}
		globs = append(globs, g)
	}
	found := false
	err := fs.WalkDir(app, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		for _, g := range globs {
			if p != "." && g.Match(p) {
				found = true
				return fs.SkipAll
			}
		}
		return nil
	})
	return found, err
}

// Announce returns the parameters the plugin announces: the dynamic
// command's JSON list first, then the static ones (which win, being later).
func (s *Service) Announce(ctx context.Context, req *Request, repo io.Reader) ([]Announcement, error) {
	static := s.Config.Spec.Parameters.Static
	dynamic := s.Config.Spec.Parameters.Dynamic
	if len(dynamic.Command) == 0 {
		return static, nil
	}
	ws, err := s.open(req, repo)
	if err != nil {
		return nil, err
	}
	defer ws.close()
	out, err := s.runner(ws, req).run(ctx, "parameters", dynamic)
	if err != nil {
		return nil, err
	}
	var announced []Announcement
	if err := json.Unmarshal([]byte(out), &announced); err != nil {
		return nil, fmt.Errorf("plugin %s: parameters.dynamic printed no JSON list of parameters: %w", s.Config.Name(), err)
	}
	return append(announced, static...), nil
}
