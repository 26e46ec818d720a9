package render

import (
	"context"

	"github.com/wavecd/wavecd/internal/plugin"
)

// Plugin renders a source with a Config Management Plugin (see
// internal/plugin): the one spec.source.plugin.name names, or the first
// whose discovery rules accept the source. A plugin that is not configured
// is an error naming it; such a source is never rendered another way.
type Plugin struct {
	Set *plugin.Set
}

// Render implements Renderer.
func (p *Plugin) Render(ctx context.Context, req *Request) (*Result, error) {
	dir, err := appPath(req.Tree, req.Source.Path)
	if err != nil {
		return nil, err
	}
	env, err := pluginEnv(req)
	if err != nil {
		return nil, err
	}
	name := ""
	if req.Source.Plugin != nil {
		name = req.Source.Plugin.Name
	}
	out, used, err := p.Set.Generate(ctx, name, &plugin.Request{AppPath: dir, Env: env}, req.Tree)
	if err != nil {
		return nil, err
	}
	what := "plugin " + used + " output"
	if err := req.budget().Take(what, int64(len(out))); err != nil {
		return nil, err
	}
	objs, err := parseManifests(what, []byte(out), req.limits().MaxManifestSize)
	if err != nil {
		return nil, err
	}
	return &Result{Objects: objs, Revisions: []string{req.Tree.Revision()}, Size: int64(len(out))}, nil
}

// pluginEnv is what Argo CD hands a plugin for req.
func pluginEnv(req *Request) ([]string, error) {
	return plugin.Environ(BuildEnv(req), req.Capabilities.KubeVersion, req.Capabilities.APIVersions, req.Source.Plugin)
}
