// Command wavecd-argocd-api serves Argo CD's gRPC API (gRPC over plain
// HTTP/2, and gRPC-web) over wavecd's REST API (see package gateway): the
// argocd CLI talks to it as to argocd-server. `wavecd server
// --argocd-api` runs it behind its own port; it prints "listening on
// ADDR" once it listens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wavecd/wavecd/argocdapi/gateway"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8083", "address to serve on (plain HTTP/2 and HTTP/1.1 for gRPC-web)")
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
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: g.Handler(), Protocols: protocols, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Printf("listening on %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
