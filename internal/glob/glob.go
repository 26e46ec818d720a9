package glob

import (
	"regexp"
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

// MatchList reports whether value matches one of patterns, as Argo CD
// matches its lists of namespaces (application.namespaces, an
// AppProject's sourceNamespaces): a pattern wrapped in `/` is a regular
// expression (Go's RE2 syntax, matched anywhere in value unless anchored),
// any other a glob.
func MatchList(patterns []string, value string) bool {
	for _, p := range patterns {
		if len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			if re, err := compileRegexp(p[1 : len(p)-1]); err == nil && re.MatchString(value) {
				return true
			}
			continue
		}
		if Match(p, value) {
			return true
		}
	}
	return false
}

// IsLiteral reports a pattern of MatchList that matches one value only,
// itself.
func IsLiteral(pattern string) bool {
	return !strings.ContainsAny(pattern, `*?[]{}\/!`)
}

var regexps = struct {
	stdsync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

func compileRegexp(expr string) (*regexp.Regexp, error) {
	regexps.Lock()
	defer regexps.Unlock()
	if re, ok := regexps.m[expr]; ok {
		return re, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	if len(regexps.m) >= maxCached {
		clear(regexps.m)
	}
	regexps.m[expr] = re
	return re, nil
}
