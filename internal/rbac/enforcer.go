package rbac

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// ConfigMapName is the ConfigMap that holds the RBAC settings.
const ConfigMapName = "argocd-rbac-cm"

// Keys of argocd-rbac-cm.
const (
	KeyPolicy      = "policy.csv"
	KeyDefault     = "policy.default"
	KeyMatchMode   = "policy.matchMode"
	KeyScopes      = "scopes"
	MatchModeGlob  = "glob"
	MatchModeRegex = "regex"
)

// Config is an installation's RBAC settings.
type Config struct {
	// Policy holds the lines of policy.csv and policy.*.csv.
	Policy Policy
	// DefaultRole is policy.default: a role every authenticated subject has.
	DefaultRole string
	// MatchMode is MatchModeGlob (the default) or MatchModeRegex.
	MatchMode string
	// Scopes are the claims of a signed-in user's token whose values are
	// its groups: argocd-rbac-cm's scopes, DefaultScopes when absent.
	Scopes []string
}

// DefaultScopes are the claims that hold a user's groups by default.
var DefaultScopes = []string{"groups"}

// ConfigFromData reads argocd-rbac-cm's data. policy.csv comes first, then
// every other policy.<name>.csv key in key order. A malformed line is left
// out and reported in the error; the rest of the Config is still usable.
func ConfigFromData(data map[string]string) (Config, error) {
	cfg := Config{DefaultRole: strings.TrimSpace(data[KeyDefault]), MatchMode: strings.TrimSpace(data[KeyMatchMode])}
	if cfg.MatchMode == "" {
		cfg.MatchMode = MatchModeGlob
	}
	var errs []error
	cfg.Scopes = DefaultScopes
	if raw := strings.TrimSpace(data[KeyScopes]); raw != "" {
		var scopes []string
		if err := yaml.Unmarshal([]byte(raw), &scopes); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a list such as [groups, email]; using [groups]", KeyScopes, raw))
		} else {
			cfg.Scopes = scopes
		}
	}
	if cfg.MatchMode != MatchModeGlob && cfg.MatchMode != MatchModeRegex {
		errs = append(errs, fmt.Errorf("%s %q is not glob or regex; using glob", KeyMatchMode, cfg.MatchMode))
		cfg.MatchMode = MatchModeGlob
	}
	keys := []string{}
	for k := range data {
		if k != KeyPolicy && strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range append([]string{KeyPolicy}, keys...) {
		p, err := Parse(data[k])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
		cfg.Policy.Append(p)
	}
	return cfg, errors.Join(errs...)
}

// ProjectSubject is the subject of an AppProject role.
func ProjectSubject(project, role string) string {
	return "proj:" + project + ":" + role
}

// projectResources are the resources a project role may grant.
var projectResources = []string{ResourceApplications, ResourceApplicationSets, ResourceLogs, ResourceExec}

// ProjectPolicy returns the lines of proj's roles: each role's policies
// and a g line per group of the role. Lines that reach beyond the project
// are left out and reported in the error.
func ProjectPolicy(proj *v1alpha1.AppProject) (Policy, error) {
	var out Policy
	var errs []error
	for _, role := range proj.Spec.Roles {
		sub := ProjectSubject(proj.Name, role.Name)
		for _, line := range role.Policies {
			p, err := Parse(line)
			if err == nil {
				err = checkProjectLine(p, proj.Name, sub)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("project %s role %s: %w", proj.Name, role.Name, err))
				continue
			}
			out.Append(p)
		}
		for _, g := range role.Groups {
			out.Groupings = append(out.Groupings, Grouping{Member: g, Role: sub})
		}
	}
	return out, errors.Join(errs...)
}

func checkProjectLine(p Policy, project, sub string) error {
	if len(p.Groupings) > 0 {
		return errors.New("a project role policy may not hold g lines")
	}
	for _, r := range p.Rules {
		switch {
		case r.Subject != sub:
			return fmt.Errorf("policy subject %q must be %q", r.Subject, sub)
		case !slices.Contains(projectResources, r.Resource):
			return fmt.Errorf("resource %q cannot be granted by a project role", r.Resource)
		case !strings.HasPrefix(r.Object, project+"/"):
			return fmt.Errorf("object %q must start with %q", r.Object, project+"/")
		}
	}
	return nil
}

// Subject is who asks: a user (or an account, or a project role) and the
// groups it belongs to.
type Subject struct {
	Name   string
	Groups []string
	// Claims are a signed-in user's token claims: the values of the
	// Config's Scopes among them are groups too.
	Claims map[string]any
}

// ScopeValues are the string values of the named claims: each a string
// or a list of strings, as Argo CD reads them.
func ScopeValues(claims map[string]any, scopes []string) []string {
	var out []string
	for _, sc := range scopes {
		switch v := claims[sc].(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Enforcer decides requests for one snapshot of the policy. It is safe for
// concurrent use.
type Enforcer struct {
	rules       []compiledRule
	roles       map[string][]string // member -> roles it has directly
	defaultRole string
	scopes      []string
}

// compiledRule is a Rule with its patterns compiled.
type compiledRule struct {
	Rule
	resource, action, object func(string) bool
}

// New builds an Enforcer from the built-in policy, cfg and the projects'
// roles.
func New(cfg Config, projects ...Policy) *Enforcer {
	all := Builtin()
	all.Append(cfg.Policy)
	for _, p := range projects {
		all.Append(p)
	}
	compile := compileGlob
	if cfg.MatchMode == MatchModeRegex {
		compile = compileRegex
	}
	scopes := cfg.Scopes
	if scopes == nil {
		scopes = DefaultScopes
	}
	e := &Enforcer{roles: map[string][]string{}, defaultRole: cfg.DefaultRole, scopes: scopes}
	for _, r := range all.Rules {
		e.rules = append(e.rules, compiledRule{
			Rule: r, resource: compile(r.Resource), action: compile(r.Action), object: compile(r.Object),
		})
	}
	for _, g := range all.Groupings {
		e.roles[g.Member] = append(e.roles[g.Member], g.Role)
	}
	return e
}

// Allowed reports whether sub may do action on object of resource.
func (e *Enforcer) Allowed(sub Subject, resource, action, object string) bool {
	if e.defaultRole != "" && e.decide([]string{e.defaultRole}, resource, action, object) {
		return true
	}
	if sub.Name == "" {
		return false
	}
	return e.decide(e.Subjects(sub), resource, action, object)
}

// Subjects are the names a subject's lines may name: its own, its
// groups, and its token's scope values.
func (e *Enforcer) Subjects(sub Subject) []string {
	out := append([]string{sub.Name}, sub.Groups...)
	return append(out, ScopeValues(sub.Claims, e.scopes)...)
}

// Groups are a subject's groups and its token's scope values.
func (e *Enforcer) Groups(sub Subject) []string { return e.Subjects(sub)[1:] }

// decide applies the rules of the given subjects and every role they
// reach: some allow and no deny.
func (e *Enforcer) decide(subjects []string, resource, action, object string) bool {
	have := e.closure(subjects)
	allowed := false
	for _, r := range e.rules {
		if !have[r.Subject] || !r.resource(resource) || !r.action(action) || !r.object(object) {
			continue
		}
		if r.Effect == Deny {
			return false
		}
		allowed = true
	}
	return allowed
}

// closure returns the subjects and every role reachable from them.
func (e *Enforcer) closure(subjects []string) map[string]bool {
	have := map[string]bool{}
	queue := slices.Clone(subjects)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if have[s] {
			continue
		}
		have[s] = true
		queue = append(queue, e.roles[s]...)
	}
	return have
}

// compileGlob compiles a glob; one that does not compile matches only
// itself.
func compileGlob(pattern string) func(string) bool {
	g, err := glob.Compile(pattern)
	if err != nil {
		return func(v string) bool { return v == pattern }
	}
	return g.Match
}

// compileRegex compiles an anchored regular expression; one that does not
// compile matches only itself.
func compileRegex(pattern string) func(string) bool {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return func(v string) bool { return v == pattern }
	}
	return re.MatchString
}
