// Package glob owns the glob patterns Argo CD's settings and projects are
// written in, as Argo CD reads them (its util/glob, over
// github.com/gobwas/glob): `*` matches any run of characters and crosses
// the separators a use names (none by default), `?` one character,
// `[...]` a class, `{a,b}` alternatives. Compiled patterns are cached; a
// pattern that does not compile matches nothing.
//
// Each use keeps Argo CD's rules for it, in the package that owns the use:
// an AppProject's sourceRepos ('/' is a separator) and destinations take
// a leading `!` as a deny rule (internal/project, through Negatable); its
// resource lists are file-name patterns (path.Match), without `!`;
// sync windows (internal/syncwindow), orphaned-resource ignore rules
// (internal/project), resource customization keys (internal/health) and
// `wavecd app sync --resource` patterns (internal/appclient) are plain
// Match; the namespaces Applications may live in (application.namespaces
// and an AppProject's sourceNamespaces, internal/application) are
// MatchList, where `/.../` is a regular expression. RBAC policies have
// their own matching (internal/rbac).
package glob
