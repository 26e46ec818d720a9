package rehearsal

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/auth"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/server"
)

// serveUI serves the web UI and API on u.UI (plain HTTP: a rehearsal
// listens on loopback) until ctx ends, reporting a failure to fatal. It
// returns the UI's address and the admin password the server generated.
func (u *Up) serveUI(ctx context.Context, s *session, fatal chan<- error) (url, password string, err error) {
	srv, err := server.NewAPIServer(ctx, s.cfg, server.APIServerOptions{
		Addr: u.UI, Namespace: Namespace, Insecure: true,
		Differ: compare.NewDiffer(s.cfg, compare.DifferOptions{Mirrors: s.mirrors, CacheDir: filepath.Join(s.ws.Cache(), "server")}),
	})
	if err != nil {
		return "", "", fmt.Errorf("web UI: %w", err)
	}
	ln, err := net.Listen("tcp", u.UI)
	if err != nil {
		return "", "", fmt.Errorf("web UI: listen on %s: %w (choose another address with --ui)", u.UI, err)
	}
	go func() {
		if err := srv.Serve(ctx, ln); err != nil {
			fatal <- fmt.Errorf("web UI: %w", err)
		}
	}()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return "", "", err
	}
	c, err := client.New(s.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return "", "", fmt.Errorf("web UI: %w", err)
	}
	password, err = auth.Store{Client: c, Namespace: Namespace}.InitialPassword(ctx)
	if err != nil {
		password = "(changed since; reset it in Secret argocd-secret)"
	}
	return "http://" + ln.Addr().String(), password, nil
}
