package sync

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A write refused for want of a webhook's endpoint is tried again, within
// the retry's time; any other answer, or the end of that time, stands.
func TestAdmitted(t *testing.T) {
	unreachable := errors.New(`Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: ` +
		`Post "https://policy-webhook.ns.svc:443/validate?timeout=10s": no endpoints available for service "policy-webhook"`)
	denied := errors.New(`admission webhook "policy.example.com" denied the request: level must be strict`)
	fast := admissionRetry{For: 2 * time.Second, Every: 10 * time.Millisecond}
	tests := []struct {
		name    string
		retry   admissionRetry
		answers []error // the last repeats
		want    error
		calls   int // 0: at least 3, until the retry's time ran out
	}{
		{"admitted at once", fast, []error{nil}, nil, 1},
		{"admitted once the endpoint is known", fast, []error{unreachable, unreachable, nil}, nil, 3},
		{"another refusal stands", fast, []error{unreachable, denied}, denied, 2},
		{"a refusal that is not the webhook's reach is not retried", fast, []error{denied}, denied, 1},
		{"the endpoint never comes", admissionRetry{For: 100 * time.Millisecond, Every: 10 * time.Millisecond}, []error{unreachable}, unreachable, 0},
		{"no retry (Argo CD parity)", admissionRetry{}, []error{unreachable, nil}, unreachable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			out, err := admitted(context.Background(), tt.retry, func(context.Context) (*unstructured.Unstructured, error) {
				answer := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				if answer != nil {
					return nil, answer
				}
				return &unstructured.Unstructured{}, nil
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if (err == nil) != (out != nil) {
				t.Errorf("out = %v with err %v", out, err)
			}
			if tt.calls > 0 && calls != tt.calls || tt.calls == 0 && calls < 3 {
				t.Errorf("write called %d times, want %d (0: at least 3)", calls, tt.calls)
			}
		})
	}
}

// A sync that stops (the controller does) ends the retry at once, with
// the last answer.
func TestAdmittedStops(t *testing.T) {
	unreachable := errors.New(`failed calling webhook "w": no endpoints available for service "s"`)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	start := time.Now()
	_, err := admitted(ctx, admissionRetry{For: time.Minute, Every: 10 * time.Millisecond}, func(context.Context) (*unstructured.Unstructured, error) {
		if calls++; calls == 2 {
			cancel()
		}
		return nil, unreachable
	})
	if !errors.Is(err, unreachable) || time.Since(start) > 30*time.Second {
		t.Errorf("err = %v after %s, want the last answer at once", err, time.Since(start))
	}
}
