package testenv

import (
	"strings"
	"testing"
)

// TestProjectGoroutines: the stacks a component that does not stop is
// reported with keep a goroutine blocked in the project's code, leave out
// the helper's own, and count the others.
func TestProjectGoroutines(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	go blockedInProject(block)
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

func blockedInProject(block <-chan struct{}) { <-block }
