package testenv

import (
	"context"
	"runtime/pprof"
	"strings"
	stdsync "sync"
	"testing"
	"time"
)

// pollInterval is how often Eventually asks again.
const pollInterval = 100 * time.Millisecond

// Eventually polls cond until it holds, and fails the test when timeout
// passes first, naming what it waited for.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyState(t, timeout, what, func() (bool, string) { return cond(), "" })
}

// EventuallyState is Eventually for a cond that also says what it saw: the
// last state goes into the failure.
func EventuallyState(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state == "" {
				t.Fatalf("timed out after %s waiting for %s", timeout, what)
			}
			t.Fatalf("timed out after %s waiting for %s; last state:\n%s", timeout, what, state)
		}
		time.Sleep(pollInterval)
	}
}

// stopWait is how long Start's stop waits for the component to return.
const stopWait = 30 * time.Second

// Start runs start (a component's Start, which blocks until its context
// ends) in the background until the test ends or the returned stop is
// called, whichever comes first; an error it returns, or a component that
// does not stop within 30s, fails the test.
func Start(t testing.TB, what string, start func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	var once stdsync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s stopped with an error: %v", what, err)
				}
			case <-time.After(stopWait):
				t.Errorf("%s did not stop within %s; its goroutines:\n%s", what, stopWait, goroutines())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// goroutines is every goroutine's stack, for a component that does not
// stop: where it hangs is the failure's cause.
func goroutines() string {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		return "(no stacks: " + err.Error() + ")"
	}
	return b.String()
}
