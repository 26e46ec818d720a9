package notify

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// EmailNotification is a template's email: fields; the body defaults to
// the message.
type EmailNotification struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// emailOptions are service.email's options, as Argo CD names them.
type emailOptions struct {
	Host               string `json:"host"`
	Port               int    `json:"port"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
	Username           string `json:"username"`
	Password           string `json:"password"`
	From               string `json:"from"`
	HTML               bool   `json:"html"`
}

type emailService struct {
	opts emailOptions
	tls  *tls.Config
}

func newEmailService(raw []byte, env serviceEnv) (Service, error) {
	var o emailOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	if o.Host == "" || o.From == "" {
		return nil, fmt.Errorf("host and from are required")
	}
	if o.Port == 0 {
		o.Port = 587
	}
	cfg := &tls.Config{ServerName: o.Host, MinVersion: tls.VersionTLS12}
	if o.InsecureSkipVerify {
		cfg.InsecureSkipVerify = true //nolint:gosec // the user asked for it
	} else if pem, ok := env.certs[o.Host]; ok {
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM([]byte(pem)) {
			return nil, fmt.Errorf("argocd-tls-certs-cm: %s holds no PEM certificate", o.Host)
		}
	}
	return &emailService{opts: o, tls: cfg}, nil
}

// Send mails the notification to the recipient, a comma-separated list
// of addresses. Port 465 speaks TLS from the start; any other port
// upgrades with STARTTLS when the server offers it, and credentials are
// sent only over TLS (or to a server on loopback).
func (s *emailService) Send(ctx context.Context, n *Notification, dest Destination) error {
	var to []string
	for _, a := range strings.Split(dest.Recipient, ",") {
		if a = strings.TrimSpace(a); a != "" {
			to = append(to, a)
		}
	}
	if len(to) == 0 {
		return fmt.Errorf("no recipient address")
	}
	subject, body := "", n.Message
	if n.Email != nil {
		subject, body = n.Email.Subject, cmp.Or(n.Email.Body, body)
	}
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := s.deliver(c, to, s.compose(to, subject, body)); err != nil {
		return fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	return nil
}

func (s *emailService) addr() string { return net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port)) }

// dial connects (TLS on port 465), greets, and upgrades with STARTTLS
// when offered.
func (s *emailService) dial(ctx context.Context) (*smtp.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr())
	if err != nil {
		return nil, fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	if s.opts.Port == 465 {
		conn = tls.Client(conn, s.tls)
	}
	c, err := smtp.NewClient(conn, s.opts.Host)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	if err := c.Hello("localhost"); err != nil {
		c.Close()
		return nil, fmt.Errorf("smtp %s: %w", s.addr(), err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && s.opts.Port != 465 {
		if err := c.StartTLS(s.tls); err != nil {
			c.Close()
			return nil, fmt.Errorf("smtp %s: starttls: %w", s.addr(), err)
		}
	}
	return c, nil
}

func (s *emailService) deliver(c *smtp.Client, to []string, msg []byte) error {
	if s.opts.Username != "" {
		if ok, _ := c.Extension("AUTH"); ok {
			if err := c.Auth(smtp.PlainAuth("", s.opts.Username, s.opts.Password, s.opts.Host)); err != nil {
				return fmt.Errorf("auth: %w", err)
			}
		}
	}
	if err := c.Mail(s.opts.From); err != nil {
		return err
	}
	for _, a := range to {
		if err := c.Rcpt(a); err != nil {
			return fmt.Errorf("recipient %s: %w", a, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// compose writes the message: headers, then the body as UTF-8 text (HTML
// with the html option). The SMTP client's data writer ends lines in CRLF
// and escapes leading dots.
func (s *emailService) compose(to []string, subject, body string) []byte {
	ctype := "text/plain"
	if s.opts.HTML {
		ctype = "text/html"
	}
	var b strings.Builder
	for _, h := range [][2]string{
		{"From", s.opts.From},
		{"To", strings.Join(to, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", time.Now().Format(time.RFC1123Z)},
		{"MIME-Version", "1.0"},
		{"Content-Type", ctype + "; charset=UTF-8"},
		{"Content-Transfer-Encoding", "8bit"},
	} {
		b.WriteString(h[0] + ": " + h[1] + "\n")
	}
	b.WriteString("\n" + strings.ReplaceAll(body, "\r\n", "\n"))
	return []byte(b.String())
}
