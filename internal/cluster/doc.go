// Package cluster owns the registered destination clusters, stored the way
// Argo CD stores them: Secrets labelled
// `argocd.argoproj.io/secret-type: cluster` in the controller's namespace,
// with the keys `name`, `server`, `config` (JSON: bearerToken, username and
// password, tlsClientConfig, execProviderConfig, proxyUrl,
// disableCompression), `namespaces` (comma-separated), `clusterResources`,
// `project` and `shard`. The Secret's labels and annotations belong to the
// cluster too (the ApplicationSet clusters generator reads them).
//
// The cluster the controller runs in is always registered as `in-cluster`
// at https://kubernetes.default.svc, with the controller's own credentials,
// unless a Secret names that server (the Secret then replaces it) or the
// registry is told to leave it out.
//
// FromSecret parses one Secret (pure, no I/O); Registry lists, and looks up
// by server URL or by name, through any client.Reader (a cache or the API
// server); Cluster.RESTConfig builds the client configuration for one
// cluster.
//
// The package does not connect to clusters, cache clients per destination
// (see internal/kube), or write Secrets.
package cluster
