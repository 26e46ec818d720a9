package controller

import (
	"context"
	"os"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"testing"
	"time"
)

// TestHoldGCPercent: the controller's percent holds while it runs and the
// one it found comes back when it stops; a GOGC the user set stands.
func TestHoldGCPercent(t *testing.T) {
	const found = 80
	for name, gogc := range map[string]string{"GOGC unset": "", "GOGC=off": "off"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("GOGC", gogc)
			if gogc == "" {
				_ = os.Unsetenv("GOGC") // t.Setenv restores it
			}
			defer debug.SetGCPercent(debug.SetGCPercent(found))
			want := gcPercent
			if gogc != "" {
				want = found
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { holdGCPercent(ctx); close(done) }()
			deadline := time.Now().Add(5 * time.Second)
			for gcPercentNow() != want && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if got := gcPercentNow(); got != want {
				t.Errorf("while running: GOGC %d, want %d", got, want)
			}
			cancel()
			<-done
			if got := gcPercentNow(); got != found {
				t.Errorf("after stopping: GOGC %d, want %d", got, found)
			}
		})
	}
}

// gcPercentNow reads the percent without changing it.
func gcPercentNow() int {
	s := []runtimemetrics.Sample{{Name: "/gc/gogc:percent"}}
	runtimemetrics.Read(s)
	return int(s[0].Value.Uint64())
}
