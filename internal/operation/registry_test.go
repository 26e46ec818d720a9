package operation

import (
	"context"
	"testing"
	"time"
)

func TestOperationSlots(t *testing.T) {
	rs := NewRegistry(1)
	ctx := context.Background()
	if !rs.acquire(ctx) {
		t.Fatal("the first operation did not get the free slot")
	}
	got := make(chan bool)
	go func() { got <- rs.acquire(ctx) }()
	select {
	case <-got:
		t.Fatal("a second operation ran while the only slot was taken")
	case <-time.After(100 * time.Millisecond):
	}
	rs.release()
	if !<-got {
		t.Fatal("the waiting operation did not get the released slot")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if rs.acquire(cancelled) {
		t.Fatal("an operation whose controller stopped took a slot that was not free")
	}
	unbounded := NewRegistry(0)
	for range 3 {
		if !unbounded.acquire(ctx) {
			t.Fatal("no bound: every operation runs")
		}
	}
}
