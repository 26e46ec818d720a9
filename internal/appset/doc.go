// Package appset owns the ApplicationSet controller: it reads the
// ApplicationSets of the controller's namespace, turns their generators into
// parameter sets, renders the template once per set, and creates, updates
// and deletes the generated Applications the way Argo CD's ApplicationSet
// controller does.
//
// Generation (generate.go and the gen_*.go files) is pure apart from its
// inputs: repository trees (internal/source, read at a resolved commit,
// never outside the repository), registered clusters (internal/cluster) and
// the plugin generator's HTTP call and the cluster-decision-resource
// generator's resources:
//
//   - list: `elements` and `elementsYaml`;
//   - clusters: one set per registered cluster matching `selector`, with
//     `name`, `nameNormalized`, `server`, the Secret's labels and
//     annotations and `values`;
//   - git: `directories` (path.Match globs, `exclude: true` wins) and
//     `files` (JSON or YAML, one set per object, flattened with dotted keys
//     for fasttemplate, nested for goTemplate), with the `path` parameters
//     and `pathParamPrefix`;
//   - matrix (two children, the second rendered with each set of the first)
//     and merge (`mergeKeys`);
//   - plugin: the parameter sets an HTTP service answers (gen_plugin.go),
//     its URL and bearer token from a ConfigMap and Secret of the namespace
//     (Objects: KubeObjects in a cluster, StaticObjects from a settings
//     file);
//   - clusterDecisionResource: one set per entry of a duck-typed
//     resource's status list that names a registered cluster (gen_duck.go,
//     read through Resources);
//   - per generator: `template` overrides and a `selector` post-filter.
//
// Templates are rendered field by field: `{{param}}` substitution by
// default, text/template with the Sprig functions (no env, expandenv or
// getHostByName) plus normalize, slugify, toYaml, fromYaml and
// fromYamlArray with `goTemplate: true`, honouring `goTemplateOptions`.
// `templatePatch` is rendered the same way and applied as a strategic
// merge patch; it cannot change the project.
//
// Reconcile (reconcile.go) does the bookkeeping: a generation or template
// error becomes the ErrorOccurred condition and nothing is created, updated
// or deleted; otherwise the generated apps are validated, applied as
// `syncPolicy.applicationsSync` allows (apply.go, honouring
// `ignoreApplicationDifferences` and preserved fields), and the set's status
// lists them (resources) and, with `strategy.type: RollingSync`, their
// rollout (rollingsync.go): automated sync is turned off on generated apps
// and a step's apps get a sync operation once every app of the earlier
// steps is Healthy and Synced.
//
// A set is reconciled when its spec, annotations, finalizers or deletion
// change, when an app it controls changes what the set reads (spec,
// metadata, sync, health, operation), when a cluster Secret changes (sets
// with a clusters generator), and every 3 minutes while it has a git
// generator (`requeueAfterSeconds` overrides). Between those, reconciles
// caused by its apps reuse the last generated result (results.go);
// `argocd.argoproj.io/application-set-refresh: "true"` forces a fresh
// read and is removed afterwards. The controller keeps its own cache of
// the namespace's ApplicationSets, Applications and cluster Secrets, and
// waits for the ApplicationSet CRD when the cluster lacks it.
//
// What the package does not own: syncing Applications (internal/controller
// runs the operations it writes), Git access (internal/source), cluster
// credentials (internal/cluster), webhooks (internal/server).
package appset
