package plugin

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Environ returns the variables Argo CD's repo-server gives a plugin: the
// build environment, KUBE_VERSION (e.g. 1.31.2), KUBE_API_VERSIONS
// (comma-separated), ARGOCD_ENV_<name> for each entry of the app's
// plugin.env (with the build variables expanded in its value), then
// ARGOCD_APP_PARAMETERS and the PARAM_* variables of its parameters.
func Environ(build v1alpha1.Env, kubeVersion string, apiVersions []string, src *v1alpha1.ApplicationSourcePlugin) ([]string, error) {
	kv := ""
	if kubeVersion != "" {
		v, err := version.ParseGeneric(kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubernetes version %q: %w", kubeVersion, err)
		}
		kv = v.String()
	}
	env := append(build.Environ(), "KUBE_VERSION="+kv, "KUBE_API_VERSIONS="+strings.Join(apiVersions, ","))
	if src == nil {
		return env, nil
	}
	expandWith := append(v1alpha1.Env{}, build...)
	expandWith = append(expandWith, &v1alpha1.EnvEntry{Name: "KUBE_VERSION", Value: kv}, &v1alpha1.EnvEntry{Name: "KUBE_API_VERSIONS", Value: strings.Join(apiVersions, ",")})
	for _, e := range src.Env {
		if e != nil {
			env = append(env, "ARGOCD_ENV_"+e.Name+"="+expandWith.Envsubst(e.Value))
		}
	}
	params, err := src.Parameters.Environ()
	if err != nil {
		return nil, err
	}
	return append(env, params...), nil
}
