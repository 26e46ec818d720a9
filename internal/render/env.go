package render

import (
	"github.com/wavecd/wavecd/api/v1alpha1"
)

// BuildEnv is the build environment Argo CD's repo-server gives a source:
// the variables plugins see and that Jsonnet arguments and Kustomize's
// commonAnnotationsEnvsubst expand.
func BuildEnv(req *Request) v1alpha1.Env {
	revision := ""
	if req.Tree != nil {
		revision = req.Tree.Revision()
	}
	return v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: req.AppName},
		{Name: "ARGOCD_APP_NAMESPACE", Value: req.Namespace},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: req.Project},
		{Name: "ARGOCD_APP_REVISION", Value: revision},
		{Name: "ARGOCD_APP_REVISION_SHORT", Value: shorten(revision, 7)},
		{Name: "ARGOCD_APP_REVISION_SHORT_8", Value: shorten(revision, 8)},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: req.Source.RepoURL},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: req.Source.Path},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: req.Source.TargetRevision},
	}
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
