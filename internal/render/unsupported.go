package render

import (
	"fmt"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// UnsupportedFields lists the fields of app that Argo CD honours and
// wavecd reads but does not implement, each with what wavecd does
// instead, as "field: explanation". They change what Argo CD would
// render, so the controller reports them as an UnsupportedFieldWarning
// condition and `wavecd render` as warnings.
func UnsupportedFields(app *v1alpha1.Application) []string {
	var out []string
	multi := app.Spec.HasMultipleSources()
	for i, src := range app.Spec.GetSources() {
		field := sourceField(multi, i)
		if src.TagPrefix != "" {
			out = append(out, fmt.Sprintf("%s.tagPrefix: not implemented; targetRevision %q is resolved without it", field, src.TargetRevision))
		}
		if h := src.Helm; h != nil && h.Version != "" && h.Version != "v3" {
			out = append(out, fmt.Sprintf("%s.helm.version: %q is not supported; rendered with Helm 3 semantics", field, h.Version))
		}
		if k := src.Kustomize; k != nil && k.Version != "" {
			out = append(out, fmt.Sprintf("%s.kustomize.version: %q: wavecd builds with its own kustomize (kustomize.buildOptions.%s still applies)", field, k.Version, k.Version))
		}
	}
	return out
}
