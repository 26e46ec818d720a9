package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/internal/notify/notifytest"
)

// recorded is what the test recorder and metrics saw.
type recorded struct {
	mu         sync.Mutex
	events     []string
	deliveries []string
	triggers   []string
}

func (r *recorded) Eventf(_ runtime.Object, typ, reason, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (r *recorded) ObserveNotificationDelivery(trigger, service string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries = append(r.deliveries, fmt.Sprintf("%s %s %v", trigger, service, ok))
}

func (r *recorded) ObserveNotificationTrigger(trigger string, triggered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.triggers = append(r.triggers, fmt.Sprintf("%s %v", trigger, triggered))
}

// TestSenderRetries: a refused delivery is tried again with growing waits
// (the receiver's Retry-After wins), a permanent refusal is not, and a
// delivery that fails for good leaves one Warning event and a failed
// delivery count, with the Secret's values masked.
func TestSenderRetries(t *testing.T) {
	const token = "s3cr3t-path-token"
	for name, tc := range map[string]struct {
		statuses   []int
		retryAfter bool
		wantTries  int
		wantWaits  []time.Duration
		wantEvent  bool
	}{
		"succeeds at once":            {wantTries: 1},
		"succeeds on the third try":   {statuses: []int{503, 502}, wantTries: 3, wantWaits: []time.Duration{time.Second, 2 * time.Second}},
		"fails for good after 4":      {statuses: []int{500, 500, 500, 500}, wantTries: 4, wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantEvent: true},
		"a 400 is not tried again":    {statuses: []int{400}, wantTries: 1, wantEvent: true},
		"429 waits as long as asked":  {statuses: []int{429}, retryAfter: true, wantTries: 2, wantWaits: []time.Duration{5 * time.Second}},
		"a 404 is not tried again":    {statuses: []int{404}, wantTries: 1, wantEvent: true},
		"a 408 is tried again":        {statuses: []int{408}, wantTries: 2, wantWaits: []time.Duration{time.Second}},
		"a 5xx then 4xx stops at 4xx": {statuses: []int{503, 403}, wantTries: 2, wantWaits: []time.Duration{time.Second}, wantEvent: true},
	} {
		t.Run(name, func(t *testing.T) {
			rcv := notifytest.NewReceiver(t)
			rcv.FailNext(tc.statuses...)
			cfg, svc := newTestService(t, map[string]string{
				"service.webhook.hook": "url: " + rcv.URL + "/hooks/$token",
				"template.t":           "message: hello",
			}, map[string][]byte{"token": []byte(token)}, "hook", nil)
			rec := &recorded{}
			s := newSender(rec, rec)
			var waits []time.Duration
			s.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			n, err := cfg.Render(loadApp(t, "apps/deployed.yaml"), Env{}, Pending{Templates: []string{"t"}, Dest: Destination{Service: "hook"}})
			if err != nil {
				t.Fatal(err)
			}
			policy := svc.(*webhookService).retryPolicy()
			if tc.retryAfter {
				policy.WaitMax = 10 * time.Second
			}
			d := delivery{app: unstructuredApp(loadApp(t, "apps/deployed.yaml")), trigger: "on-deployed",
				dest: Destination{Service: "hook"}, notification: n, service: retryAfterService{svc, tc.retryAfter}, policy: policy, redact: cfg.Redact}
			s.deliver(context.Background(), d)
			if got := len(rcv.Requests()); got != tc.wantTries {
				t.Errorf("%d tries, want %d", got, tc.wantTries)
			}
			if diff := cmp.Diff(tc.wantWaits, waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			wantDeliveries := []string{"on-deployed hook " + fmt.Sprint(!tc.wantEvent)}
			if diff := cmp.Diff(wantDeliveries, rec.deliveries); diff != "" {
				t.Errorf("delivery counts (-want +got):\n%s", diff)
			}
			if (len(rec.events) == 1) != tc.wantEvent || len(rec.events) > 1 {
				t.Fatalf("events %q, want one: %v", rec.events, tc.wantEvent)
			}
			if tc.wantEvent {
				e := rec.events[0]
				if !strings.HasPrefix(e, "Warning "+ReasonDeliveryFailed+" on-deployed to hook failed after ") || strings.Contains(e, token) || strings.Contains(e, "/hooks/") {
					t.Errorf("event %q", e)
				}
			}
		})
	}
}

// retryAfterService makes the receiver's 429 carry Retry-After: 5.
type retryAfterService struct {
	Service
	retryAfter bool
}

func (s retryAfterService) Send(ctx context.Context, n *Notification, d Destination) error {
	err := s.Service.Send(ctx, n, d)
	var h *HTTPError
	if s.retryAfter && errors.As(err, &h) {
		h.RetryAfter = 5 * time.Second
	}
	return err
}

// TestSenderBuildError: a notification that could not be built (no such
// service) fails at once with an event naming why.
func TestSenderBuildError(t *testing.T) {
	rec := &recorded{}
	s := newSender(rec, rec)
	s.deliver(context.Background(), delivery{app: unstructuredApp(loadApp(t, "apps/deployed.yaml")), trigger: "on-deployed",
		dest: Destination{Service: "slack", Recipient: "ops"}, buildErr: &permanentError{fmt.Errorf(`service "slack" is not defined`)}, redact: func(s string) string { return s }})
	want := []string{`Warning NotificationDeliveryFailed on-deployed to slack:ops: service "slack" is not defined`}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"on-deployed slack false"}, rec.deliveries); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	p := retryPolicy{}.withDefaults()
	if p.Max != 3 || p.WaitMin != time.Second || p.WaitMax != 5*time.Second {
		t.Errorf("defaults %+v", p)
	}
	var waits []time.Duration
	for n := range 5 {
		waits = append(waits, p.wait(n, &HTTPError{Status: http.StatusServiceUnavailable}))
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestSenderRetriesARefusedConnection: nothing listens; each try fails to
// connect and is tried again, and the event says so without the URL.
func TestSenderRetriesARefusedConnection(t *testing.T) {
	cfg, svc := newTestService(t, map[string]string{
		"service.webhook.hook": "url: http://127.0.0.1:1/hooks/$token\nretryMax: 2",
		"template.t":           "message: hello",
	}, map[string][]byte{"token": []byte("s3cr3t-token")}, "hook", nil)
	rec := &recorded{}
	s := newSender(rec, rec)
	var waits []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	n, err := cfg.Render(loadApp(t, "apps/deployed.yaml"), Env{}, Pending{Templates: []string{"t"}, Dest: Destination{Service: "hook"}})
	if err != nil {
		t.Fatal(err)
	}
	s.deliver(context.Background(), delivery{app: unstructuredApp(loadApp(t, "apps/deployed.yaml")), trigger: "on-deployed",
		dest: Destination{Service: "hook"}, notification: n, service: svc, policy: svc.(*webhookService).retryPolicy(), redact: cfg.Redact})
	if len(waits) != 2 || len(rec.events) != 1 {
		t.Fatalf("waits %v, events %q; want 2 retries and one event", waits, rec.events)
	}
	if e := rec.events[0]; !strings.Contains(e, "after 3 attempt(s): GET 127.0.0.1:1: ") || !strings.Contains(e, "connection refused") || strings.Contains(e, "s3cr3t") || strings.Contains(e, "/hooks") {
		t.Errorf("event %q", e)
	}
}
