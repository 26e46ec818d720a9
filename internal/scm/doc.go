// Package scm owns talking to Git hosting services for the ApplicationSet
// SCM provider and pull request generators: the repositories of an
// organization with their branches, whether a path exists on a branch,
// and the open pull requests of a repository. GitHub (and GitHub
// Enterprise) is spoken to through its official client library.
package scm
