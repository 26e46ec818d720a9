package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Service sends a rendered notification to one destination of it.
type Service interface {
	Send(ctx context.Context, n *Notification, dest Destination) error
}

// serviceTypes are the service types this package sends to, with their
// constructors. Argo CD has more (mattermost, telegram, ...); a
// service.<type> key of another type is reported as unsupported.
var serviceTypes = map[string]func(opts []byte, env serviceEnv) (Service, error){
	"webhook":  newWebhookService,
	"slack":    newSlackService,
	"teams":    newTeamsService,
	"email":    newEmailService,
	"github":   newGitHubService,
	"opsgenie": newOpsgenieService,
}

// ServiceTypes lists the supported service types, sorted.
func ServiceTypes() []string {
	out := make([]string, 0, len(serviceTypes))
	for k := range serviceTypes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// serviceEnv is what services get from the controller: the certificates
// of argocd-tls-certs-cm by server name, and the Slack threads it
// remembers across configuration changes.
type serviceEnv struct {
	certs   map[string]string
	threads *slackThreads
}

// NewService builds the service a ServiceConfig describes.
func NewService(sc ServiceConfig, env serviceEnv) (Service, error) {
	build, ok := serviceTypes[sc.Type]
	if !ok {
		return nil, fmt.Errorf("service type %q is not supported", sc.Type)
	}
	svc, err := build(sc.Options, env)
	if err != nil {
		return nil, fmt.Errorf("service %s (%s): %w", sc.Name, sc.Type, err)
	}
	return svc, nil
}

// decodeOptions reads a service's options (JSON). Keys it does not know
// are ignored, as Argo CD does, so a configuration written for Argo CD
// with options of its own still loads.
func decodeOptions(opts []byte, into any) error {
	if err := yaml.Unmarshal(opts, into); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	return nil
}

// transportOptions are the HTTP options every HTTP service takes.
type transportOptions struct {
	InsecureSkipVerify  bool   `json:"insecureSkipVerify"`
	MaxIdleConns        int    `json:"maxIdleConns"`
	MaxIdleConnsPerHost int    `json:"maxIdleConnsPerHost"`
	MaxConnsPerHost     int    `json:"maxConnsPerHost"`
	IdleConnTimeout     string `json:"idleConnTimeout"`
}

// requestTimeout bounds one HTTP request of a service.
const requestTimeout = 30 * time.Second

// httpClient builds the client a service talks to rawURL with: the
// transport options, and the server's certificate from
// argocd-tls-certs-cm when it has one. Redirects are not followed: a
// notification's credentials go to the configured host only.
func (o transportOptions) httpClient(rawURL string, env serviceEnv) (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = o.MaxIdleConns
	t.MaxIdleConnsPerHost = o.MaxIdleConnsPerHost
	t.MaxConnsPerHost = o.MaxConnsPerHost
	if o.IdleConnTimeout != "" {
		d, err := time.ParseDuration(o.IdleConnTimeout)
		if err != nil {
			return nil, fmt.Errorf("idleConnTimeout: %w", err)
		}
		t.IdleConnTimeout = d
	}
	switch {
	case o.InsecureSkipVerify:
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
	default:
		if u, err := url.Parse(rawURL); err == nil {
			if pem, ok := env.certs[u.Hostname()]; ok {
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM([]byte(pem)) {
					return nil, fmt.Errorf("argocd-tls-certs-cm: %s holds no PEM certificate", u.Hostname())
				}
				t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			}
		}
	}
	return &http.Client{
		Transport:     t,
		Timeout:       requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// HTTPError is a response a receiver refused.
type HTTPError struct {
	Status int
	// Body is the start of the response body.
	Body string
	// RetryAfter is the receiver's Retry-After, when it sent one.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// Temporary reports whether trying again may help: a 5xx, a 429, or a
// request timeout.
func (e *HTTPError) Temporary() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

// maxErrorBody is how much of a refusal's body an error quotes.
const maxErrorBody = 256

// do sends req and returns the response body of a 2xx answer; another
// status is an *HTTPError. Errors name neither the URL nor the headers,
// which may hold credentials.
func do(client *http.Client, req *http.Request) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // *url.Error quotes the URL
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", req.Method, req.URL.Host, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(clip(string(body), maxErrorBody))}
		if s, err := time.ParseDuration(resp.Header.Get("Retry-After") + "s"); err == nil {
			e.RetryAfter = s
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Host, e)
	}
	return body, nil
}

// postJSON posts v as JSON to rawURL with the headers and returns the
// response body.
func postJSON(ctx context.Context, client *http.Client, rawURL string, v any, headers map[string]string) ([]byte, error) {
	var body []byte
	switch b := v.(type) {
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, strings.NewReader(string(body)))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", redactURLError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(client, req)
}

// redactURLError drops the URL a *url.Error quotes.
func redactURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
