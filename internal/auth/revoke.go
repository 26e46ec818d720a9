package auth

import (
	"sync"
	"time"
)

// revocations remembers the ids of logged-out tokens until they would
// have expired anyway. In memory: see the package doc.
type revocations struct {
	mu  sync.Mutex
	ids map[string]time.Time // jti -> expiry (zero: never)
}

func newRevocations() *revocations { return &revocations{ids: map[string]time.Time{}} }

func (r *revocations) revoke(id string, expires, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, exp := range r.ids {
		if !exp.IsZero() && now.After(exp) {
			delete(r.ids, k)
		}
	}
	r.ids[id] = expires
}

func (r *revocations) revoked(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ids[id]
	return ok
}
