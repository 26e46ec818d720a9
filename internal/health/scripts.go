package health

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wavecd/wavecd/internal/glob"
)

// scriptSet holds Lua scripts by Argo CD's customization key: "group/Kind",
// or "Kind" for the core group, where "*" in a key is a wildcard.
type scriptSet struct {
	exact     map[string]*Script
	wildcards []keyedScript // most specific first
}

type keyedScript struct {
	key    string
	script *Script
}

// groupKindKey is Argo CD's customization key for gk.
func groupKindKey(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

func (s *scriptSet) add(key string, script *Script) {
	if !strings.ContainsAny(key, "*?") {
		if s.exact == nil {
			s.exact = map[string]*Script{}
		}
		s.exact[key] = script
		return
	}
	s.wildcards = append(s.wildcards, keyedScript{key: key, script: script})
	slices.SortFunc(s.wildcards, func(a, b keyedScript) int {
		return cmp.Or(cmp.Compare(literalLen(b.key), literalLen(a.key)), cmp.Compare(a.key, b.key))
	})
}

// lookup returns the script for gk: an exact key first, then the most
// specific wildcard key that matches (ties go to the key that sorts first).
func (s *scriptSet) lookup(gk schema.GroupKind) *Script {
	key := groupKindKey(gk)
	if script, ok := s.exact[key]; ok {
		return script
	}
	for _, w := range s.wildcards {
		if glob.Match(w.key, key) {
			return w.script
		}
	}
	return nil
}

// each calls fn for every script with its key.
func (s *scriptSet) each(fn func(key string, script *Script)) {
	for key, script := range s.exact {
		fn(key, script)
	}
	for _, w := range s.wildcards {
		fn(w.key, w.script)
	}
}

// len returns the number of scripts in the set.
func (s *scriptSet) len() int { return len(s.exact) + len(s.wildcards) }

// literalLen counts the characters of a pattern that are not wildcards.
func literalLen(pattern string) int {
	return len(pattern) - strings.Count(pattern, "*") - strings.Count(pattern, "?")
}
