package glob

import (
	"strings"
	stdsync "sync"

	"github.com/gobwas/glob"
)

// maxCached bounds the compiled patterns kept: patterns come from users'
// settings and projects, so their number is theirs to grow.
const maxCached = 10000

var cache = struct {
	stdsync.Mutex
	m map[string]glob.Glob
}{m: map[string]glob.Glob{}}

// compile returns the compiled pattern, from the cache when it was
// compiled before with the same separators.
func compile(pattern string, separators ...rune) (glob.Glob, error) {
	key := pattern + "\x00" + string(separators)
	cache.Lock()
	g, ok := cache.m[key]
	cache.Unlock()
	if ok {
		return g, nil
	}
	g, err := glob.Compile(pattern, separators...)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	defer cache.Unlock()
	if len(cache.m) >= maxCached {
		clear(cache.m)
	}
	cache.m[key] = g
	return g, nil
}

// Match reports whether value matches pattern; `*` does not cross the
// separators given.
func Match(pattern, value string, separators ...rune) bool {
	g, err := compile(pattern, separators...)
	return err == nil && g.Match(value)
}

// Valid reports why pattern does not compile; nil when it does.
func Valid(pattern string) error {
	_, err := compile(pattern)
	return err
}

// IsDeny reports a pattern that denies what it matches: one with a
// leading `!`, where a use allows negation.
func IsDeny(pattern string) bool { return strings.HasPrefix(pattern, "!") }

// Negatable is Match for a use that allows negation, as Argo CD matches an
// AppProject's sourceRepos and destinations: `*` matches everything, and
// a deny pattern matches what its pattern after the `!` does not.
func Negatable(pattern, value string, separators ...rune) bool {
	if IsDeny(pattern) {
		return !Match(pattern[1:], value, separators...)
	}
	return pattern == "*" || Match(pattern, value, separators...)
}
