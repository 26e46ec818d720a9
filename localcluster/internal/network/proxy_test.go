package network

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// staticBackends answers from a map of address -> pod; ownCert is the
// certificate the pods mount, if any.
type staticBackends struct {
	pods    map[string]*corev1.Pod
	ownCert *tls.Certificate
}

func (b staticBackends) Backend(ip string, port int32) (*corev1.Pod, string) {
	var pods []*corev1.Pod
	if p := b.pods[ip]; p != nil {
		pods = append(pods, p)
	}
	return choose(pods, port)
}

func (b staticBackends) ServingCert(_ context.Context, _ *corev1.Pod, name string) *tls.Certificate {
	if b.ownCert != nil && b.ownCert.Leaf.VerifyHostname(name) == nil {
		return b.ownCert
	}
	return nil
}

// TestProxyAnswersForReadyPods dials through the proxy as the API server
// does: CONNECT to a pod IP, then TLS for the Service's name. A Ready pod
// is answered with a certificate the cluster's CA signs, or with the one
// it mounts; any other address is refused.
func TestProxyAnswersForReadyPods(t *testing.T) {
	dir := t.TempDir()
	caPEM, caKeyPEM := newTestCA(t, "cluster-ca", nil, nil)
	writeFile(t, filepath.Join(dir, "ca.crt"), caPEM)
	writeFile(t, filepath.Join(dir, "ca.key"), caKeyPEM)
	ca, err := LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	ownCAPEM, ownCAKey := newTestCA(t, "webhook-ca", nil, nil)
	ownCertPEM, ownKeyPEM := newTestCA(t, "lbc-webhook.kube-system.svc", ownCAPEM, ownCAKey)
	own, err := tls.X509KeyPair(ownCertPEM, ownKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	own.Leaf, _ = x509.ParseCertificate(own.Certificate[0])
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	unready := ready.DeepCopy()
	unready.Status.Conditions[0].Status = corev1.ConditionFalse
	backends := staticBackends{pods: map[string]*corev1.Pod{"10.244.0.5": ready, "10.244.0.6": unready}, ownCert: &own}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- (&Proxy{Backends: backends, CA: ca, Log: slog.New(slog.DiscardHandler)}).Serve(ctx, ln)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	tests := map[string]struct {
		addr, serverName string
		roots            []byte
		wantErr          string
	}{
		"a Ready pod, the cluster's certificate": {addr: "10.244.0.5:9443", serverName: "metrics.kube-system.svc", roots: caPEM},
		"a Ready pod, the certificate it mounts": {addr: "10.244.0.5:9443", serverName: "lbc-webhook.kube-system.svc", roots: ownCAPEM},
		"a pod that is not Ready is refused":     {addr: "10.244.0.6:9443", serverName: "x.y.svc", roots: caPEM, wantErr: "Service Unavailable"},
		"an address without a pod is refused":    {addr: "10.0.0.1:10250", serverName: "x.y.svc", roots: caPEM, wantErr: "Service Unavailable"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
					return dialThrough(ctx, ln.Addr().String(), addr, tc.serverName, caPEM, tc.roots)
				},
			}}
			body, _ := os.ReadFile("testdata/admission-v1.json")
			res, err := client.Post("https://"+tc.addr+"/mutate", "application/json", bytes.NewReader(body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("POST through the proxy: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var review struct {
				Response struct{ Allowed bool } `json:"response"`
			}
			b, _ := io.ReadAll(res.Body)
			if err := json.Unmarshal(b, &review); err != nil || !review.Response.Allowed {
				t.Fatalf("response %d %s, want allowed", res.StatusCode, b)
			}
		})
	}
}

// newTestCA makes a certificate for name: a CA of its own when parent is
// nil, else a leaf that parent signs. It returns PEM certificate and key.
func newTestCA(t *testing.T, name string, parentPEM, parentKeyPEM []byte) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	parent, signer := tmpl, any(key)
	if parentPEM == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.DNSNames = []string{name}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		pair, err := tls.X509KeyPair(parentPEM, parentKeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		parent, _ = x509.ParseCertificate(pair.Certificate[0])
		signer = pair.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// dialThrough connects to addr as the API server's egress does: TLS to
// the proxy (trusting proxyRoots), CONNECT, then TLS to the target for
// serverName (trusting roots).
func dialThrough(ctx context.Context, proxy, addr, serverName string, proxyRoots, roots []byte) (net.Conn, error) {
	pp := x509.NewCertPool()
	pp.AppendCertsFromPEM(proxyRoots)
	d := tls.Dialer{Config: &tls.Config{RootCAs: pp, MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", proxy)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}) //nolint:bodyclose // a CONNECT answer has no body; the tunnel is conn
	if err != nil {
		conn.Close()
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("proxy: %s", res.Status)
	}
	tp := x509.NewCertPool()
	tp.AppendCertsFromPEM(roots)
	tc := tls.Client(conn, &tls.Config{RootCAs: tp, ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}
