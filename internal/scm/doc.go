// Package scm owns talking to Git hosting services for the ApplicationSet
// SCM provider and pull request generators: the repositories of an
// organization with their branches, whether a path exists on a branch,
// and the open pull requests of a repository. GitHub (and GitHub
// Enterprise) and Gitea are spoken to through their official client
// libraries.
package scm
