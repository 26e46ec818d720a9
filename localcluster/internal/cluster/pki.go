package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PKI is the key material of a cluster, made once and kept in DIR/pki so
// kubeconfigs and service-account tokens stay valid across restarts.
type PKI struct {
	CACert     []byte // PEM
	AdminToken string
}

const certValidity = 10 * 365 * 24 * time.Hour

// ensurePKI loads the PKI from the directory or creates it.
func ensurePKI(l Layout) (PKI, error) {
	if err := os.MkdirAll(filepath.Dir(l.PKI("x")), 0o700); err != nil {
		return PKI{}, fmt.Errorf("create pki directory: %w", err)
	}
	if _, err := os.Stat(l.PKI("ca.crt")); errors.Is(err, os.ErrNotExist) {
		if err := createPKI(l); err != nil {
			return PKI{}, err
		}
	}
	ca, err := os.ReadFile(l.PKI("ca.crt"))
	if err != nil {
		return PKI{}, fmt.Errorf("read CA certificate: %w", err)
	}
	tokens, err := os.ReadFile(l.PKI("tokens.csv"))
	if err != nil {
		return PKI{}, fmt.Errorf("read token file: %w", err)
	}
	token, _, _ := strings.Cut(string(tokens), ",")
	return PKI{CACert: ca, AdminToken: token}, nil
}

func createPKI(l Layout) error {
	caKey, caCert, err := newCA()
	if err != nil {
		return err
	}
	servingKey, serving, err := newServingCert(caKey, caCert)
	if err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return fmt.Errorf("encode service-account public key: %w", err)
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return fmt.Errorf("generate admin token: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{
		{"ca.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(caKey))},
		{"apiserver.crt", pemBlock("CERTIFICATE", serving)},
		{"apiserver.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(servingKey))},
		{"sa.key", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))},
		{"sa.pub", pemBlock("PUBLIC KEY", saPub)},
		{"tokens.csv", []byte(hex.EncodeToString(tok) + ",admin,admin,system:masters\n")},
		// ca.crt last: its presence marks a complete PKI.
		{"ca.crt", pemBlock("CERTIFICATE", caCert.Raw)},
	}
	for _, f := range files {
		if err := os.WriteFile(l.PKI(f.name), f.data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func newCA() (*rsa.PrivateKey, *x509.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "wavecd-localcluster-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return key, cert, nil
}

func newServingCert(caKey *rsa.PrivateKey, ca *x509.Certificate) (*rsa.PrivateKey, []byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create serving certificate: %w", err)
	}
	return key, der, nil
}
