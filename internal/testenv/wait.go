package testenv

import (
	"context"
	"fmt"
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
				t.Errorf("%s did not stop within %s; the goroutines in the project's code:\n%s", what, stopWait, projectGoroutines())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// projectGoroutine marks a goroutine stack that runs the project's code.
const projectGoroutine = "github.com/wavecd/wavecd/internal/"

// projectGoroutines is the stack of every goroutine that runs the
// project's code, for a component that does not stop: where it hangs is
// the failure's cause. The others (the test runner's, client-go's and the
// API server's connections, hundreds in a package of parallel tests) are
// only counted.
func projectGoroutines() string {
	var all strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&all, 2); err != nil {
		return "(no stacks: " + err.Error() + ")"
	}
	var b strings.Builder
	others := 0
	for _, g := range strings.Split(all.String(), "\n\n") {
		if strings.Contains(g, projectGoroutine) && !strings.Contains(g, "testenv.projectGoroutines") {
			b.WriteString(g + "\n\n")
		} else {
			others++
		}
	}
	fmt.Fprintf(&b, "(%d other goroutines)", others)
	return b.String()
}
