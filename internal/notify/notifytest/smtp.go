package notifytest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mail is one message the SMTP server accepted.
type Mail struct {
	From string
	To   []string
	Data string
	// TLS is set when the session was upgraded with STARTTLS before MAIL.
	TLS bool
	// User and Password are what AUTH PLAIN carried.
	User, Password string
}

// SMTPServer is a small SMTP server on 127.0.0.1 offering STARTTLS, and
// AUTH PLAIN only once the session is encrypted, as real servers do.
type SMTPServer struct {
	// Addr is host:port; Host and Port apart.
	Addr string
	Host string
	Port int
	// CertPEM is the server's self-signed certificate (for 127.0.0.1), to
	// put in argocd-tls-certs-cm.
	CertPEM string

	ln  net.Listener
	tls *tls.Config
	wg  sync.WaitGroup

	mu    sync.Mutex
	mails []Mail
}

// NewSMTPServer starts a server, stopped when the test ends.
func NewSMTPServer(t testing.TB) *SMTPServer {
	t.Helper()
	cert, certPEM := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s := &SMTPServer{
		Addr: addr.String(), Host: "127.0.0.1", Port: addr.Port, CertPEM: certPEM, ln: ln,
		tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// Mails returns the messages accepted so far.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// WaitForMails waits until n messages arrived, or fails the test.
func (s *SMTPServer) WaitForMails(t testing.TB, n int, timeout time.Duration) []Mail {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := s.Mails(); len(m) >= n {
			return m
		}
	}
	t.Fatalf("smtp: %d messages after %s, want %d", len(s.Mails()), timeout, n)
	return nil
}

func (s *SMTPServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			s.session(c)
		}()
	}
}

// session speaks SMTP on one connection.
func (s *SMTPServer) session(c net.Conn) {
	sc := &smtpConn{srv: s, c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
	sc.say("220 127.0.0.1 ESMTP notifytest")
	for {
		line, err := sc.r.ReadString('\n')
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
		if !sc.handle(strings.ToUpper(verb), arg) {
			return
		}
	}
}

// smtpConn is one client's session: its connection (TLS once started)
// and the mail it sends.
type smtpConn struct {
	srv *SMTPServer
	c   net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	m   Mail
}

func (sc *smtpConn) say(lines ...string) {
	for _, l := range lines {
		_, _ = sc.w.WriteString(l + "\r\n") // a failed write shows in the Flush below
	}
	sc.w.Flush()
}

// handle answers one command; false ends the session.
func (sc *smtpConn) handle(verb, arg string) bool {
	switch verb {
	case "EHLO", "HELO":
		if sc.m.TLS {
			sc.say("250-127.0.0.1", "250 AUTH PLAIN")
		} else {
			sc.say("250-127.0.0.1", "250 STARTTLS")
		}
	case "STARTTLS":
		sc.say("220 ready to start TLS")
		tc := tls.Server(sc.c, sc.srv.tls)
		if tc.Handshake() != nil {
			return false
		}
		sc.c, sc.r, sc.w = tc, bufio.NewReader(tc), bufio.NewWriter(tc)
		sc.m = Mail{TLS: true}
	case "AUTH":
		if !sc.m.TLS || !plainAuth(arg, &sc.m) {
			sc.say("535 authentication failed")
			return true
		}
		sc.say("235 authenticated")
	case "MAIL":
		sc.m.From = strings.Trim(strings.TrimPrefix(strings.ToUpper(arg[:5])+arg[5:], "FROM:"), "<>")
		sc.say("250 ok")
	case "RCPT":
		sc.m.To = append(sc.m.To, strings.Trim(arg[len("TO:"):], "<>"))
		sc.say("250 ok")
	case "DATA":
		return sc.data()
	case "QUIT":
		sc.say("221 bye")
		return false
	default:
		sc.say("250 ok")
	}
	return true
}

// data reads a message and queues it.
func (sc *smtpConn) data() bool {
	sc.say("354 go ahead")
	data, err := readData(sc.r)
	if err != nil {
		return false
	}
	sc.m.Data = data
	sc.srv.mu.Lock()
	sc.srv.mails = append(sc.srv.mails, sc.m)
	sc.srv.mu.Unlock()
	sc.m = Mail{TLS: sc.m.TLS, User: sc.m.User, Password: sc.m.Password}
	sc.say("250 queued")
	return true
}

// plainAuth reads AUTH PLAIN's credentials into m.
func plainAuth(arg string, m *Mail) bool {
	mech, cred, _ := strings.Cut(arg, " ")
	b, err := base64.StdEncoding.DecodeString(cred)
	parts := strings.Split(string(b), "\x00")
	if strings.ToUpper(mech) != "PLAIN" || err != nil || len(parts) != 3 {
		return false
	}
	m.User, m.Password = parts[1], parts[2]
	return true
}

// readData reads a message up to the line holding a single dot.
func readData(r *bufio.Reader) (string, error) {
	var data strings.Builder
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if l == ".\r\n" {
			return data.String(), nil
		}
		data.WriteString(strings.TrimPrefix(l, "."))
	}
}

// selfSigned makes a certificate for 127.0.0.1.
func selfSigned(t testing.TB) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return cert, string(certPEM)
}
