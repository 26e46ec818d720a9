package rehearsal

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// webhookServer answers an admission webhook in place of pods the API
// server of a local cluster cannot reach: while one of the backend pods is
// Ready it allows every request unchanged, as a mutating webhook with
// nothing to change does; otherwise it fails the call, as the API server
// does when the webhook's Service has no ready endpoint. It listens on
// 127.0.0.1 with a certificate of its own.
type webhookServer struct {
	spec     ScenarioWebhook
	client   kubernetes.Interface
	url      string
	caBundle []byte // PEM
	srv      *http.Server

	mu sync.Mutex
	// refused counts the calls failed while no backend pod was Ready.
	refused int
}

// startWebhook serves spec's webhook until stop is called.
func startWebhook(client kubernetes.Interface, spec ScenarioWebhook) (*webhookServer, error) {
	cert, caPEM, err := selfSignedCert()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the webhook: %w", err)
	}
	w := &webhookServer{spec: spec, client: client, caBundle: caPEM, url: "https://" + ln.Addr().String() + "/admit"}
	w.srv = &http.Server{
		Handler:           http.HandlerFunc(w.serve),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = w.srv.ServeTLS(ln, "", "") }()
	return w, nil
}

func (w *webhookServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = w.srv.Shutdown(ctx)
}

// refusedCalls returns how many calls were refused so far.
func (w *webhookServer) refusedCalls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

func (w *webhookServer) serve(rw http.ResponseWriter, req *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	ready, err := w.backendReady(req.Context())
	if !ready {
		w.mu.Lock()
		w.refused++
		w.mu.Unlock()
		msg := fmt.Sprintf("no ready pod %s in %s serves this webhook", w.spec.Backend.Selector, w.spec.Backend.Namespace)
		if err != nil {
			msg += ": " + err.Error()
		}
		http.Error(rw, msg, http.StatusServiceUnavailable)
		return
	}
	out := admissionv1.AdmissionReview{
		TypeMeta: review.TypeMeta,
		Response: &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true},
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(out)
}

// backendReady reports whether a backend pod is Ready and not being deleted.
func (w *webhookServer) backendReady(ctx context.Context) (bool, error) {
	pods, err := w.client.CoreV1().Pods(w.spec.Backend.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.spec.Backend.Selector})
	if err != nil {
		return false, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
			return true, nil
		}
	}
	return false, nil
}

// selfSignedCert makes a key and a certificate for 127.0.0.1 that is its
// own CA, returned as the TLS certificate and the CA bundle.
func selfSignedCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("webhook key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "wavecd rehearse webhook"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("webhook certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("webhook key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, errors.Join(errors.New("webhook certificate"), err)
	}
	return cert, certPEM, nil
}
