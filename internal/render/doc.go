// Package render turns an Application source into Kubernetes objects, the
// way Argo CD's repo-server does: plain manifest folders (Directory), Helm
// charts (in Git, in Helm repositories or OCI registries) through the Helm
// SDK, and Kustomize overlays through kustomize's krusty API. Engine ties
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
