// Package settings owns Argo CD's settings as users keep them, and turns
// them into the objects Argo CD (and wavecd) read: argocd-cm,
// argocd-cmd-params-cm, argocd-rbac-cm, argocd-secret,
// argocd-notifications-cm, argocd-notifications-secret, repository
// Secrets and the known-hosts and TLS ConfigMaps.
//
// A settings file is either a stream of those ConfigMaps and Secrets, or a
// values file of the argo-cd Helm chart (argoproj/argo-helm,
// charts/argo-cd), in which case each object is made as the chart's
// templates under argocd-configs/ make it: configs.cm, configs.params,
// configs.rbac, configs.secret (githubSecret, gitlabSecret, ..., extra),
// configs.repositories, configs.credentialTemplates, configs.ssh,
// configs.tls, and notifications.* (notifiers, templates, triggers,
// subscriptions, context, argocdUrl, secret.items). Only the keys the file
// sets are mapped, not the chart's own defaults. Everything else the file
// holds (the chart's workload settings, configs the project does not use)
// is named in a warning, never dropped in silence.
//
// The package reads files; applying the objects to a cluster, and what
// each key means, belong to its callers (the rehearsal, the controller,
// render, notifications).
package settings
