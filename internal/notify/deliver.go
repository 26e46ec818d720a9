package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/internal/logctx"
)

// retryPolicy is how often and how far apart a delivery is tried again:
// Max more attempts, waiting WaitMin, doubling up to WaitMax.
type retryPolicy struct {
	Max              int
	WaitMin, WaitMax time.Duration
}

// The default policy, Argo CD's webhook defaults: 3 retries, 1 s to 5 s.
const (
	defaultRetryMax     = 3
	defaultRetryWaitMin = time.Second
	defaultRetryWaitMax = 5 * time.Second
)

func (p retryPolicy) withDefaults() retryPolicy {
	if p.Max == 0 {
		p.Max = defaultRetryMax
	}
	if p.WaitMin <= 0 {
		p.WaitMin = defaultRetryWaitMin
	}
	if p.WaitMax <= 0 {
		p.WaitMax = defaultRetryWaitMax
	}
	if p.WaitMax < p.WaitMin {
		p.WaitMax = p.WaitMin
	}
	return p
}

// wait is the pause before retry n (0 for the first retry); a receiver's
// Retry-After wins when it is longer, up to WaitMax.
func (p retryPolicy) wait(n int, err error) time.Duration {
	d := p.WaitMin << min(n, 16)
	var h *HTTPError
	if errors.As(err, &h) && h.RetryAfter > d {
		d = h.RetryAfter
	}
	return min(d, p.WaitMax)
}

// retryable reports whether trying again may help: not for a receiver's
// 4xx refusal (other than 408 and 429) nor for a notification that cannot
// be built.
func retryable(err error) bool {
	var h *HTTPError
	if errors.As(err, &h) {
		return h.Temporary()
	}
	var p *permanentError
	return !errors.As(err, &p)
}

// permanentError is a delivery that no retry can help.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Metrics counts deliveries and trigger evaluations; internal/server's
// Metrics implements it.
type Metrics interface {
	ObserveNotificationDelivery(trigger, service string, succeeded bool)
	ObserveNotificationTrigger(trigger string, triggered bool)
}

// EventRecorder records a Kubernetes Event about an object.
type EventRecorder interface {
	Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// ReasonDeliveryFailed is the reason of the Warning Event a delivery that
// failed for good leaves on its Application.
const ReasonDeliveryFailed = "NotificationDeliveryFailed"

// delivery is one notification on its way to one destination.
type delivery struct {
	app          runtime.Object
	trigger      string
	dest         Destination
	notification *Notification
	service      Service
	// buildErr is why the notification or its service could not be built.
	buildErr error
	policy   retryPolicy
	// redact masks the Secret's values in what is logged and recorded.
	redact func(string) string
}

// sender delivers in the background, a few at a time, so neither a slow
// receiver nor a retry holds up anything else.
type sender struct {
	metrics  Metrics
	recorder EventRecorder
	slots    chan struct{}
	wg       sync.WaitGroup
	sleep    func(ctx context.Context, d time.Duration) error
}

// maxParallelDeliveries bounds the deliveries in flight.
const maxParallelDeliveries = 8

func newSender(m Metrics, r EventRecorder) *sender {
	return &sender{metrics: m, recorder: r, slots: make(chan struct{}, maxParallelDeliveries), sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send starts a delivery; it runs until it succeeds, fails for good, or
// ctx ends.
func (s *sender) send(ctx context.Context, d delivery) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-s.slots }()
		s.deliver(ctx, d)
	}()
}

// wait returns once every started delivery has ended.
func (s *sender) wait() { s.wg.Wait() }

func (s *sender) deliver(ctx context.Context, d delivery) {
	log := logctx.From(ctx).With("trigger", d.trigger, "destination", d.dest.String())
	attempts := 0
	err := d.buildErr
	for err == nil {
		attempts++
		err = d.service.Send(ctx, d.notification, d.dest)
		if err == nil {
			log.InfoContext(ctx, "notification sent", "attempts", attempts)
			s.observe(d, true)
			return
		}
		if ctx.Err() != nil {
			return // stopping: the next leader's state says it was sent
		}
		if !retryable(err) || attempts > d.policy.Max {
			break
		}
		wait := d.policy.wait(attempts-1, err)
		log.InfoContext(ctx, "notification delivery failed, retrying", "attempt", attempts, "in", wait, "err", d.redact(err.Error()))
		if s.sleep(ctx, wait) != nil {
			return
		}
		err = nil
	}
	msg := d.redact(fmt.Sprintf("%s to %s failed after %d attempt(s): %v", d.trigger, d.dest, attempts, err))
	if attempts == 0 {
		msg = d.redact(fmt.Sprintf("%s to %s: %v", d.trigger, d.dest, err))
	}
	log.WarnContext(ctx, "notification not delivered", "err", msg)
	s.observe(d, false)
	if s.recorder != nil && d.app != nil {
		s.recorder.Eventf(d.app, corev1.EventTypeWarning, ReasonDeliveryFailed, "%s", clip(msg, maxEventNote))
	}
}

// maxEventNote is how many characters an event's message keeps: at most
// 4 bytes each, under the 1024 bytes the newer events API takes.
const maxEventNote = 250

func (s *sender) observe(d delivery, ok bool) {
	if s.metrics != nil {
		s.metrics.ObserveNotificationDelivery(d.trigger, d.dest.Service, ok)
	}
}
