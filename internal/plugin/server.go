package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/wavecd/wavecd/internal/logctx"
)

// SocketPath is where a sidecar serving cfg listens in the plugins
// folder dir: `<dir>/<name>.sock`, the name apps use.
func SocketPath(dir string, cfg *Config) string {
	return filepath.Join(dir, cfg.Name()+socketSuffix)
}

// Serve serves svc on its socket in dir until ctx ends, then removes the
// socket. A socket left by an earlier run is replaced.
func Serve(ctx context.Context, svc *Service, dir string) error {
	sock := SocketPath(dir, svc.Config)
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	defer os.Remove(sock)
	srv := &http.Server{Handler: Handler(svc), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	logctx.From(ctx).Info("serving plugin", "plugin", svc.Config.Name(), "socket", sock, "discovery", svc.Config.HasDiscovery())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
