package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLimiter(t *testing.T) {
	type step struct {
		fail, succeed bool
		user, ip      string
		advance       time.Duration
		wantWait      time.Duration
	}
	f := func(user, ip string) step { return step{fail: true, user: user, ip: ip} }
	w := func(user, ip string, want time.Duration) step { return step{user: user, ip: ip, wantWait: want} }
	adv := func(d time.Duration) step { return step{advance: d} }
	tests := map[string][]step{
		"four failures pass, the fifth starts the back-off": {
			f("bob", "1.1.1.1"), f("bob", "1.1.1.1"), f("bob", "1.1.1.1"), f("bob", "1.1.1.1"),
			w("bob", "1.1.1.1", 0),
			f("bob", "1.1.1.1"),
			w("bob", "1.1.1.1", time.Second),
			w("bob", "2.2.2.2", time.Second), // per user, from anywhere
			w("eve", "1.1.1.1", time.Second), // per address, for anyone
			w("eve", "3.3.3.3", 0),
			adv(time.Second),
			w("bob", "1.1.1.1", 0),
			f("bob", "1.1.1.1"),
			w("bob", "1.1.1.1", 2*time.Second),
			f("bob", "1.1.1.1"),
			w("bob", "1.1.1.1", 4*time.Second),
		},
		"the delay is capped": {
			f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"),
			w("a", "ip", 10*time.Second),
		},
		"failures older than the window are forgotten": {
			f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"),
			adv(time.Minute),
			w("a", "ip", 0),
			f("a", "ip"),
			w("a", "ip", 0),
		},
		"a success forgets the user's failures but not the address's": {
			f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"), f("a", "ip"),
			adv(time.Second),
			{succeed: true, user: "a"},
			w("a", "other", 0),
			f("b", "ip"),
			w("b", "ip2", 0),
			w("c", "ip", 2*time.Second),
		},
	}
	for name, steps := range tests {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1000, 0)}
			l := NewLimiter(LimiterOptions{Window: time.Minute, MaxDelay: 10 * time.Second, Now: clock.now})
			var got, want []string
			for i, s := range steps {
				switch {
				case s.advance > 0:
					clock.advance(s.advance)
				case s.fail:
					l.Failed(s.user, s.ip)
				case s.succeed:
					l.Succeeded(s.user)
				default:
					got = append(got, fmt.Sprintf("step %d %s@%s wait %s", i, s.user, s.ip, l.Wait(s.user, s.ip)))
					want = append(want, fmt.Sprintf("step %d %s@%s wait %s", i, s.user, s.ip, s.wantWait))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("waits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimiterBoundsMemory(t *testing.T) {
	l := NewLimiter(LimiterOptions{MaxEntries: 10})
	for i := range 100 {
		l.Failed(fmt.Sprint("user", i), "ip")
	}
	if n := len(l.keys); n > 10 {
		t.Errorf("limiter remembers %d keys, want at most 10", n)
	}
}
