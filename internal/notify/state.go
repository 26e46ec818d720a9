package notify

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// maxNotified is how many sent notifications an app remembers, as in Argo
// CD: the oldest are forgotten first.
const maxNotified = 100

// State is an app's notified annotation: when each notification was sent,
// by key ("[oncePer:]trigger:condition:service:recipient").
type State map[string]int64

// ParseState reads the annotation; a value that is not Argo CD's JSON is
// an empty state.
func ParseState(v string) State {
	s := State{}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &s)
	}
	return s
}

// stateKey is Argo CD's key of a notification.
func stateKey(trigger string, r ConditionResult, dest Destination) string {
	key := trigger + ":" + r.Key() + ":" + dest.Service + ":" + dest.Recipient
	if r.OncePer != "" {
		key = r.OncePer + ":" + key
	}
	return key
}

// mark records the notification as sent at now; false when it was
// already.
func (s State) mark(key string, now time.Time) bool {
	if _, ok := s[key]; ok {
		return false
	}
	s[key] = now.Unix()
	return true
}

// unmark forgets a notification whose condition no longer holds, so it
// fires again when it holds again. Keys with a oncePer value are never
// unmarked (a condition that does not hold has no oncePer value), so such
// a notification fires once per value.
func (s State) unmark(key string) bool {
	if _, ok := s[key]; !ok {
		return false
	}
	delete(s, key)
	return true
}

// Encode returns the annotation's value, keeping the newest maxNotified
// entries; "" for an empty state.
func (s State) Encode() string {
	if len(s) == 0 {
		return ""
	}
	if extra := len(s) - maxNotified; extra > 0 {
		keys := slices.SortedFunc(maps.Keys(s), func(a, b string) int { return int(s[a] - s[b]) })
		for _, k := range keys[:extra] {
			delete(s, k)
		}
	}
	b, _ := json.Marshal(s)
	return string(b)
}
