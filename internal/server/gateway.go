package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// gateway is the process that serves Argo CD's gRPC API (the argocdapi
// module's wavecd-argocd-api) behind the server's port: gRPC and gRPC-web
// requests go to it, and it answers them through the server's REST API on
// a loopback listener of its own.
type gateway struct {
	proxy *httputil.ReverseProxy
	stop  func()
}

// isGRPC reports whether a request is gRPC or gRPC-web.
func isGRPC(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/grpc")
}

// startGateway serves the server's handler on a loopback listener, runs
// the gateway binary against it and returns the proxy to the gateway.
func startGateway(ctx context.Context, binary string, handler http.Handler) (*gateway, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("gateway upstream: %w", err)
	}
	upstream := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	go func() { _ = upstream.Serve(ln) }()
	cmd := exec.Command(binary, "--listen", "127.0.0.1:0", "--upstream", "http://"+ln.Addr().String())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = upstream.Close()
		return nil, fmt.Errorf("start the Argo CD API gateway %s: %w", binary, err)
	}
	done := make(chan struct{})
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		_ = upstream.Close()
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case a := <-addr:
		slog.InfoContext(ctx, "serving Argo CD's gRPC API", "gateway", a, "pid", cmd.Process.Pid)
		return &gateway{proxy: grpcProxy(a), stop: stop}, nil
	case <-done:
		stop()
		return nil, errors.New("the Argo CD API gateway exited before it listened")
	case <-time.After(30 * time.Second):
		stop()
		return nil, errors.New("the Argo CD API gateway did not listen within 30s")
	}
}

// grpcProxy forwards to the gateway over HTTP/2 without TLS, streaming.
func grpcProxy(addr string) *httputil.ReverseProxy {
	target := &url.URL{Scheme: "http", Host: addr}
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	return &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:     &http.Transport{Protocols: protocols},
		FlushInterval: -1,
	}
}
