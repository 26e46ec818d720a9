// Package rbac owns authorization decisions with Argo CD's RBAC model: the
// policy CSV of ConfigMap argocd-rbac-cm (policy.csv, and every
// policy.<name>.csv key, in key order), its policy.default role and
// policy.matchMode, the built-in roles role:admin and role:readonly, and the
// roles of AppProjects (spec.roles[].policies and groups).
//
// A policy line is either
//
//	p, SUBJECT, RESOURCE, ACTION, OBJECT, EFFECT
//	g, SUBJECT-OR-GROUP, ROLE
//
// A request (subject and its groups, resource, action, object) is allowed
// when the subject, one of its groups, or a role reachable from them through
// g lines, has a matching allow line and no matching deny line: deny wins.
// RESOURCE, ACTION and OBJECT match as globs (`*` matches any run of
// characters, `/` included), or as anchored regular expressions with
// policy.matchMode: regex. Objects of applications are PROJECT/APP. As in
// Argo CD, the default role is tried on its own first: what it allows is
// allowed even if the subject's own lines deny it.
//
// A user signed in through an OpenID provider is its user identifier, and
// its groups are the values of the token claims argocd-rbac-cm's scopes
// names (default [groups]; each claim a string or a list of strings), so
// `g, my-org:platform, role:admin` gives that group's members the admin
// role.
//
// Project roles have the subject proj:PROJECT:ROLE. A project line that
// names another subject, another project's objects, or a resource outside
// applications, applicationsets, logs and exec is ignored, as Argo CD
// ignores it, so a project cannot grant more than its own apps.
//
// The package is pure: it parses strings and AppProject objects handed to
// it and reads nothing from the cluster (internal/server does).
package rbac
