package hydrate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/source"
)

// pushAttempts bounds the retries of a push refused because the branch
// moved (another app's hydration, or a person).
const pushAttempts = 4

// outcome is one hydration's result.
type outcome struct {
	drySHA, hydratedSHA string
	// committed: a manifest changed and a commit was pushed.
	committed bool
	// group are the other apps of the group, hydrated with it.
	group []*v1alpha1.Application
}

// rendered is one app's manifest.yaml and the folder it goes to.
type rendered struct {
	dir      string
	manifest []byte
}

// hydrate renders the dry source of app and of its group (Argo CD's: the
// apps hydrating the same dry source and revision to the same branch) at
// one dry commit and writes them to the target branch: one commit when
// any manifest.yaml changed, else only a note on the branch's head naming
// the dry commit. An app of the group that cannot be rendered fails the
// whole group, as in Argo CD.
func (h *Hydrator) hydrate(ctx context.Context, app *v1alpha1.Application, req Request) (outcome, error) {
	spec := app.Spec.SourceHydrator
	if problems := Check(spec); len(problems) > 0 {
		return outcome{}, errors.New(problems[0])
	}
	dir, err := hydratedPath(spec)
	if err != nil {
		return outcome{}, err
	}
	var group []*v1alpha1.Application
	if req.Group != nil {
		if group, err = req.Group(ctx); err != nil {
			return outcome{}, err
		}
	}
	for _, s := range group {
		if sameDestination(s.Spec.SourceHydrator, spec) {
			return outcome{}, fmt.Errorf("app %s hydrator uses the same destination: repo=%s, path=%s", s.Name, syncRepo(spec), spec.SyncSource.Path)
		}
	}
	objs, drySHA, err := req.Render(ctx, dryApp(app, ""))
	if err != nil {
		return outcome{drySHA: drySHA}, fmt.Errorf("failed to get manifests: %w", err)
	}
	out := outcome{drySHA: drySHA, group: group}
	own, err := manifestYAML(objs)
	if err != nil {
		return out, fmt.Errorf("failed to write manifests: %w", err)
	}
	apps, err := renderGroup(ctx, req.Render, group, drySHA)
	if err != nil {
		return out, err
	}
	info, err := h.Repos.CommitInfo(ctx, spec.DrySource.RepoURL, drySHA)
	if err != nil {
		return out, fmt.Errorf("failed to get revision metadata for %q: %w", drySHA, err)
	}
	w := write{h: h, spec: spec, apps: append([]rendered{{dir: dir, manifest: own}}, apps...), drySHA: drySHA, info: info, settings: req.Settings}
	if h.WriteCredentials != nil {
		// A Secret that cannot be read is named in the log; the others
		// still serve, and without any the read credentials push.
		creds, err := h.WriteCredentials(ctx)
		if err != nil {
			logctx.From(ctx).Warn("repository-write secrets", "err", err)
		}
		w.cred = creds.For(syncRepo(spec))
	}
	for attempt := 1; ; attempt++ {
		out.hydratedSHA, out.committed, err = w.once(ctx)
		if !errors.Is(err, source.ErrBranchMoved) || attempt == pushAttempts {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// renderGroup renders the other apps of the group at drySHA.
func renderGroup(ctx context.Context, render Renderer, group []*v1alpha1.Application, drySHA string) ([]rendered, error) {
	var out []rendered
	for _, s := range group {
		dir, err := hydratedPath(s.Spec.SourceHydrator)
		if err == nil {
			var objs []*unstructured.Unstructured
			if objs, _, err = render(ctx, dryApp(s, drySHA)); err == nil {
				var manifest []byte
				manifest, err = manifestYAML(objs)
				out = append(out, rendered{dir: dir, manifest: manifest})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("cannot hydrate because application %s has an error: %w", s.Name, err)
		}
	}
	return out, nil
}

// dryApp is app with the dry source as its only source, at revision when
// that is set.
func dryApp(app *v1alpha1.Application, revision string) *v1alpha1.Application {
	dry := app.DeepCopy()
	d := app.Spec.SourceHydrator.DrySource
	dry.Spec.SourceHydrator, dry.Spec.Sources = nil, nil
	dry.Spec.Source = &v1alpha1.ApplicationSource{
		RepoURL: d.RepoURL, Path: d.Path, TargetRevision: cmp.Or(revision, d.TargetRevision),
		Helm: d.Helm, Kustomize: d.Kustomize, Directory: d.Directory, Plugin: d.Plugin,
	}
	return dry
}

// write is a group's manifests on their way to the branch.
type write struct {
	h        *Hydrator
	spec     *v1alpha1.SourceHydrator
	apps     []rendered
	drySHA   string
	info     source.CommitInfo
	settings Settings
	// cred pushes (nil: the repository's read credentials).
	cred *source.RepoCredential
}

// once reads the branch and writes to it; ErrBranchMoved asks for another
// try.
func (w write) once(ctx context.Context) (string, bool, error) {
	author := object.Signature{Name: w.settings.AuthorName, Email: w.settings.AuthorEmail, When: w.h.now()}
	b, err := w.h.Repos.OpenBranch(ctx, syncRepo(w.spec), targetBranch(w.spec), source.PublishOptions{
		From: w.spec.SyncSource.TargetBranch, Notes: notesRef, Author: author, Credential: w.cred,
	})
	if err != nil {
		return "", false, fmt.Errorf("failed to checkout target branch: %w", err)
	}
	files := map[string][]byte{}
	for _, a := range w.apps {
		current, found, err := b.Read(path.Join(a.dir, manifestFile))
		if err != nil {
			return "", false, err
		}
		if !found || !bytes.Equal(current, a.manifest) {
			if err := w.addApp(files, a); err != nil {
				return "", false, err
			}
		}
	}
	sha := b.Head()
	if len(files) > 0 {
		msg, err := w.addRoot(files)
		if err != nil {
			return "", false, err
		}
		if sha, err = b.Commit(ctx, files, msg); err != nil {
			return "", false, fmt.Errorf("failed to push: %w", err)
		}
	}
	note := []byte(fmt.Sprintf(`{"drySha":%q}`, w.drySHA))
	if old, found, err := b.ReadNote(sha); err == nil && found && bytes.Equal(bytes.TrimSpace(old), note) {
		return sha, len(files) > 0, nil // hydrated from this dry commit already
	}
	if err := b.Note(ctx, sha, note); err != nil {
		return "", false, fmt.Errorf("failed to add commit note: %w", err)
	}
	return sha, len(files) > 0, nil
}

// addApp adds one app's changed manifest.yaml, with its hydrator.metadata
// and README.md.
func (w write) addApp(files map[string][]byte, a rendered) error {
	local := metadata{RepoURL: w.spec.DrySource.RepoURL, DrySHA: w.drySHA}
	localJSON, err := local.encode()
	if err != nil {
		return err
	}
	readme, err := execute(KeyReadmeMessageTemplate, w.settings.ReadmeMessageTemplate, defaultReadmeTemplate, readmeData{RepoURL: local.RepoURL, DrySHA: local.DrySHA})
	if err != nil {
		return err
	}
	files[path.Join(a.dir, manifestFile)] = a.manifest
	files[path.Join(a.dir, metadataFile)] = localJSON
	files[path.Join(a.dir, readmeFile)] = readme
	return nil
}

// addRoot adds the branch's root files and returns the commit message.
func (w write) addRoot(files map[string][]byte) (string, error) {
	subject, body := splitMessage(w.info.Message)
	root := metadata{RepoURL: w.spec.DrySource.RepoURL, DrySHA: w.drySHA, Author: w.info.Author, Date: w.info.Date.UTC().Format(time.RFC3339), Subject: subject, Body: body}
	rootJSON, err := root.encode()
	if err != nil {
		return "", err
	}
	data, err := root.templateData()
	if err != nil {
		return "", err
	}
	msg, err := execute(KeyCommitMessageTemplate, w.settings.CommitMessageTemplate, defaultCommitTemplate, data)
	if err != nil {
		return "", err
	}
	files[metadataFile] = rootJSON
	files[attributesFile] = []byte(gitAttributes)
	return string(msg), nil
}
