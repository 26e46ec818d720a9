package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/wavecd/wavecd/internal/source"
)

// SetOptions configure a Set.
type SetOptions struct {
	// Dir is the plugins folder; empty means no plugins.
	Dir string
	// Limits bound each run of a plugin run in process.
	Limits Limits
	// WorkDir holds the runs' folders (default: the system's temp folder).
	WorkDir string
}

// baseEnvKeys are the variables of this process a plugin run in process
// sees, besides Argo CD's: enough to find and run tools, no credentials.
var baseEnvKeys = []string{"PATH", "HOME", "LANG", "LC_ALL", "USER"}

// Set is the plugins of a plugins folder, read again on every use so
// sidecars that start later, and edited files, are picked up.
type Set struct {
	opts SetOptions
}

// NewSet returns the plugins of opts.Dir.
func NewSet(opts SetOptions) *Set { return &Set{opts: opts} }

// Dir is the plugins folder.
func (s *Set) Dir() string {
	if s == nil {
		return ""
	}
	return s.opts.Dir
}

// backend runs one plugin: in process or in a sidecar.
type backend interface {
	name() string
	discovery(ctx context.Context) (bool, error)
	match(ctx context.Context, req *Request, tree *source.Tree) (supported, discovery bool, err error)
	generate(ctx context.Context, req *Request, tree *source.Tree) (string, error)
}

func (s *Set) backends() ([]backend, error) {
	if s.Dir() == "" {
		return nil, nil
	}
	f, err := readFolder(s.opts.Dir)
	if err != nil {
		return nil, err
	}
	var out []backend
	for _, c := range f.configs {
		out = append(out, &local{svc: &Service{Config: c, BaseEnv: baseEnv(), Limits: s.opts.Limits, WorkDir: s.opts.WorkDir}})
	}
	for name, sock := range f.sockets {
		out = append(out, newRemote(name, sock))
	}
	slices.SortFunc(out, func(a, b backend) int { return strings.Compare(a.name(), b.name()) })
	return out, nil
}

func baseEnv() []string {
	var env []string
	for _, k := range baseEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Fingerprint identifies the plugins of the folder (their configurations
// and sidecars), for render caches; "" without plugins.
func (s *Set) Fingerprint() string {
	if s.Dir() == "" {
		return ""
	}
	f, err := readFolder(s.opts.Dir)
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(struct {
		Configs []*Config
		Sockets map[string]string
	}{f.configs, f.sockets})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NotFoundError is a source whose plugin is not configured, or whose
// plugin's discovery rules refuse it.
type NotFoundError struct {
	// Name is the plugin asked for; "" when picked by discovery.
	Name string
	// Available are the plugins the folder offers.
	Available []string
	// Dir is the plugins folder ("" when none is set).
	Dir string
	// Cause is the last plugin's failure to say whether it supports the
	// source (a discover command that failed, an unreachable sidecar).
	Cause error
}

func (e *NotFoundError) Unwrap() error { return e.Cause }

func (e *NotFoundError) Error() string {
	msg := "could not find plugin supporting the given repository"
	if e.Name != "" {
		msg = fmt.Sprintf("could not find cmp-server plugin with name %q supporting the given repository", e.Name)
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	switch {
	case e.Dir == "":
		return msg + " (no plugins folder is set: --plugins-dir)"
	case len(e.Available) == 0:
		return msg + fmt.Sprintf(" (plugins folder %s has no plugin)", e.Dir)
	}
	return msg + fmt.Sprintf(" (plugins in %s: %s)", e.Dir, strings.Join(e.Available, ", "))
}

// Select returns the name of the plugin that renders a source: the one
// named name (which must accept the source if it has discovery rules), or
// with name "" the first plugin, by name, whose discovery rules accept it.
// No such plugin is a *NotFoundError.
func (s *Set) Select(ctx context.Context, name string, req *Request, tree *source.Tree) (string, error) {
	b, err := s.selectBackend(ctx, name, req, tree)
	if err != nil {
		return "", err
	}
	return b.name(), nil
}

func (s *Set) selectBackend(ctx context.Context, name string, req *Request, tree *source.Tree) (backend, error) {
	all, err := s.backends()
	if err != nil {
		return nil, err
	}
	notFound := &NotFoundError{Name: name, Dir: s.Dir()}
	for _, b := range all {
		notFound.Available = append(notFound.Available, b.name())
	}
	for _, b := range all {
		if name != "" && b.name() != name {
			continue
		}
		has, err := b.discovery(ctx)
		if err != nil {
			notFound.Cause = err
			continue
		}
		if !has {
			if name != "" {
				return b, nil
			}
			continue
		}
		supported, _, err := b.match(ctx, req, tree)
		if err != nil {
			notFound.Cause = err
			continue
		}
		if supported {
			return b, nil
		}
	}
	return nil, notFound
}

// Discover returns the plugin whose discovery rules accept a source that
// names no type, or "" when none does (the source is then a Kustomize,
// Helm or Directory source as its files say).
func (s *Set) Discover(ctx context.Context, req *Request, tree *source.Tree) (string, error) {
	if s.Dir() == "" {
		return "", nil
	}
	name, err := s.Select(ctx, "", req, tree)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return "", nil
	}
	return name, err
}

// Generate selects the plugin as Select does and runs it.
func (s *Set) Generate(ctx context.Context, name string, req *Request, tree *source.Tree) (out, used string, err error) {
	b, err := s.selectBackend(ctx, name, req, tree)
	if err != nil {
		return "", "", err
	}
	out, err = b.generate(ctx, req, tree)
	return out, b.name(), err
}

// local runs a plugin in this process.
type local struct {
	svc *Service
}

func (l *local) name() string                            { return l.svc.Config.Name() }
func (l *local) discovery(context.Context) (bool, error) { return l.svc.Config.HasDiscovery(), nil }

func (l *local) match(ctx context.Context, req *Request, tree *source.Tree) (bool, bool, error) {
	if !l.svc.Config.HasDiscovery() {
		return false, false, nil
	}
	// A file name or glob is matched in the tree itself: no copy needed.
	if app, err := fs.Sub(tree, req.AppPath); err == nil {
		if supported, byName, err := l.svc.Config.matchFiles(app); byName {
			return supported, true, err
		}
	}
	var supported, discovery bool
	err := withRepo(ctx, tree, func(r io.Reader) error {
		var err error
		supported, discovery, err = l.svc.Match(ctx, req, r)
		return err
	})
	return supported, discovery, err
}

func (l *local) generate(ctx context.Context, req *Request, tree *source.Tree) (string, error) {
	var out string
	err := withRepo(ctx, tree, func(r io.Reader) error {
		var err error
		out, err = l.svc.Generate(ctx, req, r)
		return err
	})
	return out, err
}

// withRepo hands use a tar.gz stream of tree, written as it is read.
func withRepo(ctx context.Context, tree *source.Tree, use func(io.Reader) error) error {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(source.WriteTar(ctx, tree, pw, source.TarOptions{OmitEscapingSymlinks: true}))
	}()
	err := use(pr)
	_ = pr.CloseWithError(io.ErrClosedPipe) // unblock the writer if use stopped early
	return err
}
