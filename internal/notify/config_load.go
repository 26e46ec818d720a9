package notify

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wavecd/wavecd/internal/kube"
)

// loadedConfig is the configuration of one version of the ConfigMap and
// Secrets, with the services built from it on first use.
type loadedConfig struct {
	version string
	config  *Config
	certs   map[string]string

	mu       sync.Mutex
	services map[string]Service
}

// service returns the named service, built once per configuration.
func (l *loadedConfig) service(name string, threads *slackThreads) (Service, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.services[name]; ok {
		return s, nil
	}
	sc, ok := l.config.Services[name]
	if !ok {
		return nil, fmt.Errorf("service %q is not defined in %s (service.<type>.%s)", name, ConfigMapName, name)
	}
	s, err := NewService(sc, serviceEnv{certs: l.certs, threads: threads})
	if err != nil {
		return nil, err
	}
	l.services[name] = s
	return s, nil
}

// loadConfig returns the configuration of the namespace's ConfigMap and
// Secret, parsed again when either changed; nil when there is no
// ConfigMap (nothing is configured).
func (r *reconciler) loadConfig(ctx context.Context, ns string) (*loadedConfig, error) {
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: ConfigMapName}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.configured.Store(false)
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", ConfigMapName, err)
	}
	r.configured.Store(true)
	secret := &corev1.Secret{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: SecretName}, secret); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read %s: %w", SecretName, err)
	}
	certs := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: TLSCertsConfigMap}, certs); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read %s: %w", TLSCertsConfigMap, err)
	}
	version := cm.ResourceVersion + "/" + secret.ResourceVersion + "/" + certs.ResourceVersion
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.config != nil && r.config.version == version {
		return r.config, nil
	}
	cfg := ParseConfig(cm.Data, kube.SecretData(secret))
	r.config = &loadedConfig{version: version, config: cfg, certs: certs.Data, services: map[string]Service{}}
	r.recordConfigErrors(ctx, cm, cfg.Errors)
	return r.config, nil
}
