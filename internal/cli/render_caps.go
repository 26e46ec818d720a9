package cli

import (
	"fmt"

	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/render"
)

// capabilities are what Helm's .Capabilities sees: --kube-version and
// --api-versions, over the cluster's when --kubeconfig or --context
// names one.
func (a *renderAction) capabilities() (render.Capabilities, error) {
	version, apiVersions := a.KubeVersion, a.APIVersions
	if a.ReadCluster && (version == "" || len(apiVersions) == 0) {
		cfg, err := a.kube.restConfig()
		if err != nil {
			return render.Capabilities{}, err
		}
		c, err := kube.New(cfg)
		if err != nil {
			return render.Capabilities{}, fmt.Errorf("connect to %s: %w", cfg.Host, err)
		}
		if version == "" {
			if version, err = c.ServerVersion(); err != nil {
				return render.Capabilities{}, fmt.Errorf("cluster %s: %w", cfg.Host, err)
			}
		}
		if len(apiVersions) == 0 {
			if apiVersions, err = c.APIVersions(); err != nil {
				return render.Capabilities{}, fmt.Errorf("cluster %s: %w", cfg.Host, err)
			}
		}
	}
	return render.NewCapabilities(version, apiVersions), nil
}
