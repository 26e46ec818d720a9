package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/server"
)

const serverLong = `Serve wavecd's API and web UI against a cluster, like argocd-server.

The REST API follows Argo CD's paths and JSON under /api/v1 (session,
settings, applications and their resource tree, managed resources, events,
sync, rollback, terminate, create, update, patch and delete, the application
event stream, projects, accounts, clusters, repositories, ApplicationSets),
so scripts written for Argo CD's API keep working. With the gateway
wavecd-argocd-api beside this binary (or --argocd-api PATH), the same port
serves Argo CD's gRPC API and gRPC-web too: the argocd CLI logs in and works
against it (argocd login HOST:PORT, with --plaintext when --insecure).
Sign-in through an OpenID provider follows argocd-cm's oidc.config. The web UI at / lists the applications and shows each one
with its resource tree, sync waves, diff, sync dialog, last sync and history,
updated live.

Log in as admin: on first start, when Secret argocd-secret holds no admin
password, a random one is generated; print it with
"wavecd admin initial-password". Local users come from argocd-cm
(accounts.NAME: apiKey, login) and permissions from argocd-rbac-cm, as in
Argo CD.

The server speaks HTTPS with the certificate of Secret argocd-server-tls
(a self-signed one is generated and stored there when missing); --insecure
serves plain HTTP. It reads and writes Applications directly: the controller
(wavecd controller, or Argo CD's) runs the syncs it requests.

POST /api/webhook takes GitHub push events, as argocd-server does: the apps
of the pushed repository and branch get a refresh (signed with
webhook.github.secret of argocd-secret when that is set).`

const serverExample = `  wavecd server --kubeconfig .wavecd/kubeconfig --insecure
  wavecd admin initial-password --kubeconfig .wavecd/kubeconfig
  curl -s http://127.0.0.1:8080/api/v1/session -d '{"username":"admin","password":"..."}'`

// serverAction runs the API server.
type serverAction struct {
	errOut     io.Writer
	kube       kubeFlags
	namespace  string
	appNS      []string
	listen     string
	insecure   bool
	sessionTTL time.Duration
	cacheDir   string
	mirrors    []string
	verbose    bool
	argocdAPI  string
}

func newServerCommand(s Streams) *cobra.Command {
	a := &serverAction{errOut: s.Err}
	cmd := &cobra.Command{
		Use:     "server",
		Short:   "Serve the API and web UI (like argocd-server)",
		Long:    serverLong,
		Example: serverExample,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.Run(cmd.Context()) },
	}
	a.kube.addTo(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&a.namespace, "namespace", "n", "argocd", "namespace of the Applications, AppProjects and settings")
	addAppNamespacesFlag(f, &a.appNS, "served (the API's ?appNamespace=)")
	f.StringVar(&a.listen, "listen", server.DefaultAddr, "address to serve the API and UI on")
	f.BoolVar(&a.insecure, "insecure", false, "serve plain HTTP instead of HTTPS")
	f.DurationVar(&a.sessionTTL, "session-ttl", 24*time.Hour, "lifetime of a login session")
	f.StringVar(&a.cacheDir, "cache-dir", "", "directory for the Git clones diffs render (default: the user cache directory)")
	f.StringArrayVar(&a.mirrors, "mirror", nil, "when diffing, "+mirrorUsage)
	f.BoolVarP(&a.verbose, "verbose", "v", false, "log every request")
	f.StringVar(&a.argocdAPI, "argocd-api", "auto", "gateway binary that serves Argo CD's gRPC API (the argocd CLI) on the same port: a path, "+
		"auto (wavecd-argocd-api next to this binary, when it is there) or none")
	return cmd
}

// argocdAPIBinary resolves --argocd-api: "" when off.
func (a *serverAction) argocdAPIBinary() (string, error) {
	switch a.argocdAPI {
	case "none", "":
		return "", nil
	case "auto":
		self, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("--argocd-api auto: find this binary: %w", err)
		}
		p := filepath.Join(filepath.Dir(self), "wavecd-argocd-api")
		if _, statErr := os.Stat(p); statErr == nil {
			return p, nil
		}
		return "", nil // none beside this binary: gRPC stays off
	}
	if _, err := os.Stat(a.argocdAPI); err != nil {
		return "", fmt.Errorf("--argocd-api: %w", err)
	}
	return a.argocdAPI, nil
}

// Run serves until ctx ends.
func (a *serverAction) Run(ctx context.Context) error {
	setLoggers(a.errOut, logLevel(a.verbose))
	mirrors, err := parseMirrorFlags(a.mirrors)
	if err != nil {
		return err
	}
	cfg, err := a.kube.restConfig()
	if err != nil {
		return err
	}
	gateway, err := a.argocdAPIBinary()
	if err != nil {
		return err
	}
	srv, err := server.NewAPIServer(ctx, cfg, server.APIServerOptions{
		Addr: a.listen, Namespace: a.namespace, ApplicationNamespaces: a.appNS, Insecure: a.insecure, SessionTTL: a.sessionTTL, ArgoCDAPI: gateway,
		Differ: compare.NewDiffer(cfg, compare.DifferOptions{CacheDir: a.cacheDir, Mirrors: mirrors, Namespace: a.namespace}),
	})
	if err != nil {
		return err
	}
	scheme := "https"
	if a.insecure {
		scheme = "http"
	}
	slog.Info("api server starting", "url", scheme+"://"+a.listen, "namespace", a.namespace)
	return srv.Start(ctx)
}
