package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/kube"
	"github.com/wavecd/wavecd/internal/project"
)

// APIServerOptions configure NewAPIServer.
type APIServerOptions struct {
	// Addr is the listen address (default DefaultAddr).
	Addr string
	// Namespace holds the Applications and settings (default argocd).
	Namespace string
	// ApplicationNamespaces are more namespaces whose Applications are
	// served (APIOptions.ApplicationNamespaces).
	ApplicationNamespaces []string
	// Insecure serves plain HTTP instead of HTTPS.
	Insecure bool
	// SessionTTL is the lifetime of session tokens (default 24h).
	SessionTTL time.Duration
	// Differ computes diffs (compare.Differ); nil leaves them empty.
	Differ Differ
	// Limiter throttles failed logins (default: 5 failures, then back off).
	Limiter *auth.Limiter
	// ArgoCDAPI is the gateway binary that serves Argo CD's gRPC API on
	// the same port (Options.ArgoCDAPI); empty leaves gRPC out.
	ArgoCDAPI string
}

// NewAPIServer prepares an API server for the cluster cfg points at, as
// `wavecd server` runs it: it bootstraps argocd-secret (signing key,
// initial admin password), loads or creates the TLS certificate unless
// Insecure, and returns a Server (a Runnable) serving the API, the UI and
// the health probes. Start it with Start.
func NewAPIServer(ctx context.Context, cfg *rest.Config, o APIServerOptions) (*Server, error) {
	if o.Namespace == "" {
		o.Namespace = appclient.DefaultNamespace
	}
	cfg = rest.CopyConfig(cfg)
	kube.DefaultRateLimit(cfg)
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return nil, err
	}
	kube, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to the Kubernetes API: %w", err)
	}
	store := auth.Store{Client: kube, Namespace: o.Namespace}
	res, err := store.Bootstrap(ctx)
	if err != nil {
		return nil, err
	}
	if err := project.EnsureDefault(ctx, kube, o.Namespace); err != nil {
		return nil, err
	}
	if res.GeneratedAdminPassword {
		slog.InfoContext(ctx, "generated the initial admin password; print it with: wavecd admin initial-password",
			"secret", o.Namespace+"/"+auth.InitialAdminSecretName)
	}
	opts := Options{Addr: o.Addr, ArgoCDAPI: o.ArgoCDAPI}
	if !o.Insecure {
		if opts.TLS, err = ServerTLS(ctx, kube, o.Namespace); err != nil {
			return nil, err
		}
	}
	api, err := NewAPI(APIOptions{
		Namespace: o.Namespace, ApplicationNamespaces: o.ApplicationNamespaces, Kube: kube, RESTConfig: cfg, Differ: o.Differ, Secure: !o.Insecure,
		Auth: auth.New(auth.Options{Settings: store, SessionTTL: o.SessionTTL, Limiter: o.Limiter}),
	})
	if err != nil {
		return nil, err
	}
	opts.API = api
	// Git hosts may point their webhooks at the UI's address, as with
	// argocd-server: refreshes go through the refresh annotation, which the
	// controller acts on.
	maxBody, err := MaxWebhookBytes(ctx, kube, o.Namespace)
	if err != nil {
		return nil, err
	}
	opts.Webhook = NewWebhook(WebhookOptions{
		Apps:         appLister(kube, application.Namespaces{Control: o.Namespace, Patterns: o.ApplicationNamespaces}),
		Refresher:    application.AnnotationRefresher{Client: kube},
		Secrets:      SettingsSecret{Reader: kube, Namespace: o.Namespace},
		MaxBodyBytes: maxBody,
	})
	return New(opts), nil
}

// appLister lists the Applications of ns.
func appLister(r client.Reader, ns application.Namespaces) application.Lister {
	return application.Lister{Reader: r, Namespaces: ns.Watch(), Enabled: ns.Enabled}
}
