package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// WebhookNotification is a template's request for one webhook service,
// under webhook.<service name>.
type WebhookNotification struct {
	Method string `json:"method,omitempty" notify:"literal"`
	Path   string `json:"path,omitempty"`
	Body   string `json:"body,omitempty"`
}

// webhookOptions are service.webhook.<name>'s options.
type webhookOptions struct {
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
	BasicAuth *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"basicAuth"`
	RetryWaitMin duration `json:"retryWaitMin"`
	RetryWaitMax duration `json:"retryWaitMax"`
	RetryMax     int      `json:"retryMax"`
	transportOptions
}

type webhookService struct {
	opts   webhookOptions
	client *http.Client
}

func newWebhookService(raw []byte, env serviceEnv) (Service, error) {
	var o webhookOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	if o.URL == "" {
		return nil, fmt.Errorf("url is required")
	}
	client, err := o.httpClient(o.URL, env)
	if err != nil {
		return nil, err
	}
	return &webhookService{opts: o, client: client}, nil
}

// retryPolicy is the webhook's own: retryMax, retryWaitMin, retryWaitMax.
func (s *webhookService) retryPolicy() retryPolicy {
	return retryPolicy{Max: s.opts.RetryMax, WaitMin: time.Duration(s.opts.RetryWaitMin), WaitMax: time.Duration(s.opts.RetryWaitMax)}.withDefaults()
}

// Send sends the message as the body of a GET to the url, or the
// template's webhook.<name> request: its method, its path appended to the
// url and its body.
func (s *webhookService) Send(ctx context.Context, n *Notification, dest Destination) error {
	method, url, body := http.MethodGet, s.opts.URL, n.Message
	if w, ok := n.Webhook[dest.Service]; ok {
		body = w.Body
		if w.Method != "" {
			method = strings.ToUpper(w.Method)
		}
		if w.Path != "" {
			url = strings.TrimRight(url, "/") + "/" + strings.TrimLeft(w.Path, "/")
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", redactURLError(err))
	}
	for _, h := range s.opts.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if a := s.opts.BasicAuth; a != nil {
		req.SetBasicAuth(a.Username, a.Password)
	}
	_, err = do(s.client, req)
	return err
}

// duration reads "5s" or, as Argo CD's JSON does, nanoseconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a duration such as 5s: %w", err)
	}
	*d = duration(n)
	return nil
}
