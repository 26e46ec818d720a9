package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestUnsupportedFields(t *testing.T) {
	tests := map[string]struct {
		spec v1alpha1.ApplicationSpec
		want []string
	}{
		"plain source": {spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "r", Helm: &v1alpha1.ApplicationSourceHelm{Version: "v3"}}}},
		"tag prefix and helm v2 in sources": {
			spec: v1alpha1.ApplicationSpec{Sources: v1alpha1.ApplicationSources{
				{RepoURL: "r", TargetRevision: "1.x", TagPrefix: "web/"},
				{RepoURL: "r", Helm: &v1alpha1.ApplicationSourceHelm{Version: "v2"}, Kustomize: &v1alpha1.ApplicationSourceKustomize{Version: "v4.5.7"}},
			}},
			want: []string{
				`spec.sources[0].tagPrefix: not implemented; targetRevision "1.x" is resolved without it`,
				`spec.sources[1].helm.version: "v2" is not supported; rendered with Helm 3 semantics`,
				`spec.sources[1].kustomize.version: "v4.5.7": wavecd builds with its own kustomize (kustomize.buildOptions.v4.5.7 still applies)`,
			},
		},
		"source hydrator (the controller's to judge)": {
			spec: v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
				DrySource: v1alpha1.DrySource{RepoURL: "r", Path: "dry"}, SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "prod"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{Spec: tc.spec}
			if diff := cmp.Diff(tc.want, UnsupportedFields(app)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	hydrated := &v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
		DrySource: v1alpha1.DrySource{RepoURL: "dry-repo"}, SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "prod"}}}
	want := v1alpha1.ApplicationSources{{RepoURL: "dry-repo", Path: "prod", TargetRevision: "env/prod"}}
	if diff := cmp.Diff(want, hydrated.GetSources()); diff != "" {
		t.Errorf("a hydrated app's sources (-want +got):\n%s", diff)
	}
}
