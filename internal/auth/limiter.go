package auth

import (
	"sync"
	"time"
)

// LimiterOptions configure a Limiter; zero fields take the defaults.
type LimiterOptions struct {
	// MaxFailures is how many failures within Window are allowed before
	// attempts are refused (default 5, as Argo CD).
	MaxFailures int
	// Window forgets failures older than this (default 5m).
	Window time.Duration
	// BaseDelay is the first refusal delay; each further failure doubles
	// it (default 1s).
	BaseDelay time.Duration
	// MaxDelay caps the delay (default 5m).
	MaxDelay time.Duration
	// MaxEntries bounds the keys remembered (default 10000): an attacker
	// cycling usernames or addresses cannot grow memory without bound.
	MaxEntries int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Limiter throttles failed logins per username and per client address.
// It is safe for concurrent use.
type Limiter struct {
	opts LimiterOptions
	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	count int
	last  time.Time
}

// NewLimiter returns a Limiter.
func NewLimiter(o LimiterOptions) *Limiter {
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.Window <= 0 {
		o.Window = 5 * time.Minute
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = time.Second
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 5 * time.Minute
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Limiter{opts: o, keys: map[string]*failures{}}
}

func userKey(user string) string { return "user:" + user }
func ipKey(ip string) string     { return "ip:" + ip }

// Wait returns how long the next attempt of user from ip must wait; zero
// lets it through.
func (l *Limiter) Wait(user, ip string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	return max(l.waitLocked(userKey(user), now), l.waitLocked(ipKey(ip), now))
}

func (l *Limiter) waitLocked(key string, now time.Time) time.Duration {
	f := l.keys[key]
	if f == nil || now.Sub(f.last) >= l.opts.Window {
		return 0
	}
	over := f.count - l.opts.MaxFailures
	if over < 0 {
		return 0
	}
	delay := l.opts.BaseDelay
	for range over {
		delay *= 2
		if delay >= l.opts.MaxDelay {
			delay = l.opts.MaxDelay
			break
		}
	}
	return max(0, f.last.Add(delay).Sub(now))
}

// Failed records a failed attempt of user from ip.
func (l *Limiter) Failed(user, ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	for _, key := range []string{userKey(user), ipKey(ip)} {
		f := l.keys[key]
		if f == nil || now.Sub(f.last) >= l.opts.Window {
			l.makeRoom(now)
			f = &failures{}
			l.keys[key] = f
		}
		f.count++
		f.last = now
	}
}

// Succeeded forgets the failures of user. Those of the address stay, so
// an attacker who owns one account cannot reset the counter of the
// address it guesses other passwords from.
func (l *Limiter) Succeeded(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, userKey(user))
}

// makeRoom drops forgotten entries, and the oldest one if still full.
func (l *Limiter) makeRoom(now time.Time) {
	if len(l.keys) < l.opts.MaxEntries {
		return
	}
	var oldest string
	for k, f := range l.keys {
		if now.Sub(f.last) >= l.opts.Window {
			delete(l.keys, k)
		} else if oldest == "" || f.last.Before(l.keys[oldest].last) {
			oldest = k
		}
	}
	if len(l.keys) >= l.opts.MaxEntries && oldest != "" {
		delete(l.keys, oldest)
	}
}
