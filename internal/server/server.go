package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wavecd/wavecd/internal/metrics"
)

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8080"

// Options configure a Server.
type Options struct {
	// Addr is the listen address (default DefaultAddr).
	Addr string
	// Webhook serves POST /api/webhook; nil leaves the path out.
	Webhook http.Handler
	// Metrics serves /metrics; nil leaves the path out.
	Metrics *metrics.Metrics
	// Ready decides /readyz; nil is always ready. It gets the request's
	// context and should return quickly.
	Ready func(ctx context.Context) error
	// API serves every other path: the REST API under /api/v1 and the web
	// UI (see NewAPI); nil leaves them out.
	API http.Handler
	// TLS, when set, makes the server speak HTTPS only.
	TLS *tls.Config
	// ArgoCDAPI is the binary of the gateway that serves Argo CD's gRPC
	// API (wavecd-argocd-api); set, gRPC and gRPC-web requests on the
	// server's port go to it. HTTP/2 is served with TLS and, plain, as h2c.
	ArgoCDAPI string
	// ShutdownTimeout bounds the graceful shutdown (default 10s).
	ShutdownTimeout time.Duration
}

// Server serves wavecd's HTTP endpoints. It is a controller-runtime
// Runnable that runs on every replica, leader or not.
type Server struct {
	opts    Options
	handler http.Handler
	// gateway is set while the Argo CD API gateway runs.
	gateway atomic.Pointer[gateway]
}

// New returns a Server.
func New(o Options) *Server {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	s := &Server{opts: o}
	s.handler = s.routes()
	return s
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok") })
	mux.HandleFunc("/readyz", s.readyz)
	if s.opts.Webhook != nil {
		mux.Handle("/api/webhook", s.opts.Webhook)
	}
	if s.opts.Metrics != nil {
		mux.Handle("/metrics", s.opts.Metrics.Handler())
	}
	if s.opts.API != nil {
		mux.Handle("/", s.opts.API)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g := s.gateway.Load(); g != nil && isGRPC(r) {
			g.proxy.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(r.Context()); err != nil {
			writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
	}
	writeText(w, http.StatusOK, "ok")
}

// Handler returns the server's routes, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// NeedLeaderElection tells controller-runtime to run the server on every
// replica.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on the configured address and serves until ctx ends, then
// shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.opts.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then stops accepting, waits up to
// ShutdownTimeout for requests in flight and closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		// Requests keep ctx's values (the logger) but not its
		// cancellation, so a shutdown lets them finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if sd, ok := s.opts.API.(interface{ Shutdown() }); ok {
		srv.RegisterOnShutdown(sd.Shutdown)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	srv.Protocols = protocols
	scheme := "http"
	if s.opts.TLS != nil {
		cfg := s.opts.TLS.Clone()
		cfg.NextProtos = []string{"h2", "http/1.1"}
		ln, scheme = tls.NewListener(ln, cfg), "https"
	}
	if s.opts.ArgoCDAPI != "" {
		g, err := startGateway(ctx, s.opts.ArgoCDAPI, s.handler)
		if err != nil {
			_ = ln.Close()
			return err
		}
		s.gateway.Store(g)
		defer g.stop()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	slog.InfoContext(ctx, "http server listening", "addr", ln.Addr().String(), "scheme", scheme)
	select {
	case err := <-errc:
		return fmt.Errorf("serve http on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if err != nil {
		return fmt.Errorf("shut down http server: %w", err)
	}
	return nil
}
