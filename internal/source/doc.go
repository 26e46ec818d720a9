// Package source owns where manifests come from: Git repositories fetched
// with go-git over HTTP(S) or SSH into an on-disk cache keyed by URL,
// revision resolution (branch, tag, full or short SHA, HEAD), read-only
// trees per commit SHA, plain local folders, Helm charts from Helm
// repositories (index.yaml) and OCI registries, OCI artifacts of plain
// files (Argo CD 3.1's oci:// sources, unpacked into in-memory trees cached
// by digest), offline mirrors of all of them, repository credentials, and
// path safety.
//
// A Tree is the only way renderers read repository files. It never follows a
// symlink out of the repository and it refuses any path that leaves the root
// through "..", an absolute path or a symlink; such a refusal is a
// *PathError naming the path. Trees are immutable and safe for concurrent
// use, so one Tree per commit is shared by every app and every refresh.
//
// Credentials come from Argo CD's repository and repo-creds Secrets
// (CredentialsFromSecrets) and may be replaced while running
// (Repos.SetCredentials, Charts.SetCredentials). SSH host keys are checked
// against known hosts (ReposOptions.KnownHosts) unless the Secret says
// insecure. No error quotes a password, token or private key.
//
// The package does not render anything (see internal/render) and does not
// talk to Kubernetes: Secrets arrive already read.
package source
