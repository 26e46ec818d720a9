// Package render turns an Application source into Kubernetes objects, the
// way Argo CD's repo-server does: plain manifest and Jsonnet folders
// (Directory, Jsonnet through go-jsonnet), Helm charts (in Git, in Helm
// repositories or OCI registries) through the Helm SDK, Kustomize overlays
// through kustomize's krusty API (helmCharts inflated with the Helm SDK
// when argocd-cm's kustomize.buildOptions enable Helm), and Config
// Management Plugins (through internal/plugin). Sources are Git commits,
// local folders or OCI artifacts. Engine ties
// sources, multiple sources with $ref value files and the render cache
// together; each Renderer handles one source type. Chart dependencies that
// a chart does not vendor are fetched as `helm dependency build` would,
// from Helm repositories, OCI registries or their mirrors.
// Engine.SetCredentials hands the credentials read from repository Secrets
// to both the Git and the chart fetcher.
//
// Renderers read repository files only through a source.Tree, so no path in
// a source can leave its repository. A Directory source's file that does not
// parse is an error naming the file and line (a render without it would
// prune what it defines); one that parses but holds no object, or a symlink
// not followed, is a warning in Result.Warnings. Limits bound one document,
// the files of a Directory source and an app's whole output, whatever tool
// made it (argocd-cm reposerver.max.*, see limits.go); a Budget counts bytes
// against one, and Budget.Reader caps an external tool's output as it is
// read. Rendering is pure: no cluster access,
// no writes, no network except fetching charts that a source names.
//
// The package does not decide sync order, hooks or health; it returns
// objects in the order the tool produced them.
package render
