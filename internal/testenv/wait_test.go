package testenv

import (
	"strings"
	"testing"
)

// TestProjectGoroutines: the stacks a component that does not stop is
// reported with keep a goroutine blocked in the project's code, leave out
// the helper's own, and count the others.
func TestProjectGoroutines(t *testing.T) {
	started, block := make(chan struct{}), make(chan struct{})
	defer close(block)
	go blockedInProject(started, block)
	// A goroutine that has not run yet shows only who created it.
	<-started
	out := projectGoroutines()
	if !strings.Contains(out, "testenv.blockedInProject") {
		t.Errorf("the goroutine blocked in the project's code is missing:\n%s", out)
	}
	if strings.Contains(out, "testenv.projectGoroutines") {
		t.Errorf("the helper's own goroutine is listed:\n%s", out)
	}
	if !strings.HasSuffix(out, "other goroutines)") {
		t.Errorf("the other goroutines are not counted:\n%s", out)
	}
}

func blockedInProject(started chan<- struct{}, block <-chan struct{}) {
	close(started)
	<-block
}
