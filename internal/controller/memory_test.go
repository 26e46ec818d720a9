package controller

import "testing"

func TestMemoryTrimmer(t *testing.T) {
	tests := map[string]struct {
		busy    bool
		free    uint64
		release bool
	}{
		"idle with a burst's heap left free releases it": {free: 64 << 20, release: true},
		"busy keeps the heap for the work":               {busy: true, free: 64 << 20},
		"idle with little free does nothing":             {free: 1 << 20},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			released := false
			m := memoryTrimmer{
				busy:    func() bool { return tc.busy },
				free:    func() uint64 { return tc.free },
				release: func() { released = true },
			}
			m.tick()
			if released != tc.release {
				t.Errorf("released = %v, want %v", released, tc.release)
			}
		})
	}
}

func TestActivitySince(t *testing.T) {
	var a activity
	if a.since() {
		t.Error("no work counted, yet since reports some")
	}
	a.add()
	a.add()
	if !a.since() {
		t.Error("work counted, yet since reports none")
	}
	if a.since() {
		t.Error("since reports the same work twice")
	}
}
