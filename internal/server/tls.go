package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TLSSecretName holds the server's certificate, as in Argo CD.
const TLSSecretName = "argocd-server-tls"

// ServerTLS returns the TLS configuration of the API server: the
// certificate of Secret argocd-server-tls (tls.crt, tls.key) or, when the
// Secret does not exist, a new self-signed one stored there. When the
// Secret cannot be created the certificate is kept in memory and a
// warning logged.
func ServerTLS(ctx context.Context, c client.Client, namespace string) (*tls.Config, error) {
	var sec corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: TLSSecretName}, &sec)
	switch {
	case err == nil:
		cert, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s: %w", namespace, TLSSecretName, err)
		}
		return tlsConfig(cert), nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, TLSSecretName, err)
	}
	certPEM, keyPEM, err := SelfSignedCert(namespace, time.Now())
	if err != nil {
		return nil, err
	}
	sec = corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: TLSSecretName, Labels: map[string]string{PartOfLabel: "argocd"}},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
	if err := c.Create(ctx, &sec); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ServerTLS(ctx, c, namespace) // another replica stored one first
		}
		slog.WarnContext(ctx, "cannot store the generated certificate; it lasts until the server stops", "secret", TLSSecretName, "err", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load generated certificate: %w", err)
	}
	return tlsConfig(cert), nil
}

func tlsConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// SelfSignedCert returns a PEM certificate and key valid for a year for
// localhost, 127.0.0.1 and the argocd-server Service names.
func SelfSignedCert(namespace string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"wavecd"}, CommonName: "argocd-server"},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{
			"localhost", "argocd-server", "argocd-server." + namespace,
			"argocd-server." + namespace + ".svc", "argocd-server." + namespace + ".svc.cluster.local",
		},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
