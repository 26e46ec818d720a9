// Package plugin runs Argo CD Config Management Plugins (the v2 format: a
// ConfigManagementPlugin with spec.init, spec.generate, spec.discover and
// spec.parameters), the way Argo CD's repo-server and cmp-server do.
//
// A Set holds the plugins of a plugins folder: ConfigManagementPlugin
// files (or ConfigMaps carrying one under the plugin.yaml key), run by
// this process, and the sockets of sidecars (`wavecd cmp-server`), each
// running one plugin next to its tools. Select picks a plugin by name
// (`<metadata.name>-<spec.version>`, or the name alone without a version)
// or by discovery (fileName, find.glob, find.command), in name order.
//
// Every run gets a throwaway copy of the repository (a tar stream of the
// source.Tree, unpacked into a fresh folder with size and path checks), a
// timeout that kills the plugin's whole process group, a cap on its
// output, and only the environment Argo CD gives: the build variables
// (ARGOCD_APP_*), KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_ENV_* from the
// Application and PARAM_* with ARGOCD_APP_PARAMETERS. A plugin run by this
// process sees PATH, HOME, LANG and a TMPDIR of its own besides: never the
// controller's other variables or credentials. A sidecar adds its own
// container's environment, as Argo CD's cmp-server does. stderr is kept
// for the error.
//
// The sidecar protocol is HTTP over a Unix socket (or loopback TCP): GET
// /v1/config describes the plugin; POST /v1/match and /v1/generate take a
// multipart body (a JSON request, then the repository as tar.gz) and
// answer JSON.
//
// spec.lockRepo is accepted and ignored: every run has its own copy of the
// repository, so there is nothing to lock. spec.provideGitCreds is
// ignored too: plugins never get repository credentials.
//
// The package does not parse what a plugin prints (internal/render does)
// and does not read Applications.
package plugin
