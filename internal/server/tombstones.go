package server

import (
	"sync"
	"time"
)

// tombstoneAge is how long the server remembers an app it was asked to
// delete.
const tombstoneAge = 10 * time.Minute

// tombstones are the apps deleted through this server lately, by
// namespace/name, each as last read. A client that deletes an app and
// then watches it for its DELETED event (argocd app delete --wait) may
// start watching after the app is already gone; the stream then sends the
// DELETED event from here instead of waiting for ever.
type tombstones struct {
	mu   sync.Mutex
	apps map[string]tombstone
}

type tombstone struct {
	app map[string]any
	at  time.Time
}

// add remembers a deleted app, and forgets the old ones.
func (t *tombstones) add(namespace, name string, app map[string]any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.apps == nil {
		t.apps = map[string]tombstone{}
	}
	for k, v := range t.apps {
		if now.Sub(v.at) > tombstoneAge {
			delete(t.apps, k)
		}
	}
	t.apps[namespace+"/"+name] = tombstone{app: app, at: now}
}

// get returns the app deleted lately under namespace/name, if any.
func (t *tombstones) get(namespace, name string) (map[string]any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.apps[namespace+"/"+name]
	if !ok || time.Since(v.at) > tombstoneAge {
		return nil, false
	}
	return v.app, true
}
