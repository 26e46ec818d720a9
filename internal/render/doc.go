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
// a source can leave its repository. Rendering is pure: no cluster access,
// no writes, no network except fetching charts that a source names.
//
// The package does not decide sync order, hooks or health; it returns
// objects in the order the tool produced them.
package render
