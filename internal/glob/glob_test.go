package glob

import "testing"

func TestMatch(t *testing.T) {
	tests := map[string]struct {
		pattern, value string
		separators     []rune
		want           bool
	}{
		"exact":                        {"web", "web", nil, true},
		"star crosses slashes":         {"https://github.com/*", "https://github.com/org/repo", nil, true},
		"star stops at a separator":    {"https://github.com/*", "https://github.com/org/repo", []rune{'/'}, false},
		"double star crosses it":       {"https://github.com/**", "https://github.com/org/repo", []rune{'/'}, true},
		"question mark is one":         {"web-?", "web-1", nil, true},
		"a class":                      {"web-[0-9]", "web-x", nil, false},
		"alternatives":                 {"{web,api}", "api", nil, true},
		"an empty pattern is empty":    {"", "core", nil, false},
		"an empty pattern matches one": {"", "", nil, true},
		"a broken pattern never":       {"[web", "[web", nil, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Match(tc.pattern, tc.value, tc.separators...); got != tc.want {
				t.Errorf("Match(%q, %q, %q) = %v, want %v", tc.pattern, tc.value, tc.separators, got, tc.want)
			}
		})
	}
}

func TestNegatable(t *testing.T) {
	tests := map[string]struct {
		pattern, value string
		want           bool
	}{
		"star":                  {"*", "anything/at/all", true},
		"a deny pattern's miss": {"!kube-system", "web", true},
		"a deny pattern's hit":  {"!kube-system", "kube-system", false},
		"a denied glob":         {"!kube-*", "kube-public", false},
		"plain":                 {"web-*", "web-1", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Negatable(tc.pattern, tc.value); got != tc.want {
				t.Errorf("Negatable(%q, %q) = %v, want %v", tc.pattern, tc.value, got, tc.want)
			}
		})
	}
	if err := Valid("[broken"); err == nil {
		t.Error("Valid accepts a pattern that does not compile")
	}
}

// TestResourceCustomizationKeys: the keys of resource.customizations match
// group/kind as Argo CD matches them.
func TestResourceCustomizationKeys(t *testing.T) {
	tests := map[string]struct {
		pattern, name string
		want          bool
	}{
		"star matches a group":         {"*.crossplane.io/*", "ec2.aws.crossplane.io/VPC", true},
		"star crosses slashes":         {"*", "apps/Deployment", true},
		"literal must match":           {"*.crossplane.io/*", "ec2.aws.example.com/VPC", false},
		"question mark is one char":    {"apps/Deploymen?", "apps/Deployment", true},
		"question mark needs one char": {"apps/Deployment?", "apps/Deployment", false},
		"star in the middle":           {"a*c", "abbbc", true},
		"trailing text must match":     {"a*c", "abbbd", false},
		"empty pattern":                {"", "x", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Match(tc.pattern, tc.name); got != tc.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
			}
		})
	}
}

func TestMatchList(t *testing.T) {
	tests := map[string]struct {
		patterns []string
		value    string
		want     bool
	}{
		"none":                      {nil, "team-a", false},
		"a literal":                 {[]string{"team-a"}, "team-a", true},
		"another literal":           {[]string{"team-b"}, "team-a", false},
		"a glob":                    {[]string{"other", "team-*"}, "team-a", true},
		"a regexp":                  {[]string{"/^team-[a-c]$/"}, "team-b", true},
		"a regexp's miss":           {[]string{"/^team-[a-c]$/"}, "team-d", false},
		"an unanchored regexp":      {[]string{"/team/"}, "my-team-a", true},
		"a broken regexp":           {[]string{"/team-(/"}, "team-(", false},
		"slashes alone are a glob":  {[]string{"//"}, "//", true},
		"a star matches all of one": {[]string{"*"}, "anything", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MatchList(tc.patterns, tc.value); got != tc.want {
				t.Errorf("MatchList(%q, %q) = %v, want %v", tc.patterns, tc.value, got, tc.want)
			}
		})
	}
}

func TestIsLiteral(t *testing.T) {
	for pattern, want := range map[string]bool{"team-a": true, "team-*": false, "/team/": false, "team-[ab]": false, "{a,b}": false} {
		if got := IsLiteral(pattern); got != want {
			t.Errorf("IsLiteral(%q) = %v, want %v", pattern, got, want)
		}
	}
}
