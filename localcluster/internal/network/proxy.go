package network

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Backends tell who answers at an address and with which certificate.
type Backends interface {
	// Backend returns the pod that answers at ip:port, or why none does.
	Backend(ip string, port int32) (*corev1.Pod, string)
	// ServingCert returns a certificate of the pod's own valid for
	// serverName, or nil.
	ServingCert(ctx context.Context, p *corev1.Pod, serverName string) *tls.Certificate
}

// Proxy is the API server's egress to the cluster: an HTTP CONNECT proxy
// that answers, as Endpoint, for the Ready pods the API server dials and
// refuses every other address.
type Proxy struct {
	Backends Backends
	CA       *CA
	Log      *slog.Logger

	answers *connListener
}

// Serve accepts CONNECT requests on ln until ctx ends, over TLS with a
// certificate the CA signs for ln's address (the API server's egress
// selector speaks TLS to a TCP proxy).
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	p.answers = newConnListener(ln.Addr())
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	ln = tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return p.CA.Leaf(host) }})
	answer := &http.Server{Handler: Endpoint(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(p.Log.Handler(), slog.LevelDebug)}
	connect := &http.Server{Handler: http.HandlerFunc(p.connect), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(p.Log.Handler(), slog.LevelDebug)}
	go func() { _ = answer.Serve(p.answers) }()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = connect.Shutdown(shutdown)
		_ = answer.Shutdown(shutdown)
	}()
	if err := connect.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("egress proxy: %w", err)
	}
	return nil
}

// connect takes one CONNECT: a Ready pod at the address gets the
// connection answered; anything else is refused, as a dial to an address
// where nothing listens.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT is served", http.StatusMethodNotAllowed)
		return
	}
	host, portStr, err := net.SplitHostPort(r.Host)
	port, perr := strconv.ParseUint(portStr, 10, 16)
	if err != nil || perr != nil {
		http.Error(w, "want CONNECT host:port", http.StatusBadRequest)
		return
	}
	pod, why := p.Backends.Backend(host, int32(port))
	if pod == nil {
		p.Log.Info("connection refused", "to", r.Host, "why", why)
		http.Error(w, fmt.Sprintf("dial %s: connection refused (%s)", r.Host, why), http.StatusServiceUnavailable)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = conn.Close()
		return
	}
	p.Log.Debug("answering", "to", r.Host, "pod", pod.Namespace+"/"+pod.Name)
	p.answers.push(tls.Server(bufferedConn{conn, buf.Reader}, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			if c := p.Backends.ServingCert(hello.Context(), pod, name); c != nil {
				return c, nil
			}
			return p.CA.Leaf(name)
		},
	}))
}

// bufferedConn reads what the CONNECT's reader already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// connListener hands the answered connections to an http.Server.
type connListener struct {
	addr  net.Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }
