// Command wavecd-argocd-api serves Argo CD's gRPC API over wavecd's REST
// API (see package gateway): the argocd CLI talks to it as to
// argocd-server.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/wavecd/wavecd/argocdapi/gateway"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8083", "address to serve gRPC on (plain HTTP/2)")
	upstream := flag.String("upstream", "http://127.0.0.1:8080", "wavecd's REST API")
	flag.Parse()
	if err := run(*listen, *upstream); err != nil {
		fmt.Fprintln(os.Stderr, "wavecd-argocd-api:", err)
		os.Exit(1)
	}
}

func run(listen, upstream string) error {
	g, err := gateway.New(gateway.Options{Upstream: upstream})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := g.GRPCServer()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	slog.Info("serving Argo CD's gRPC API", "listen", ln.Addr().String(), "upstream", upstream)
	return srv.Serve(ln)
}
