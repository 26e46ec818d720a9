package rbac

import (
	"testing"
)

// FuzzPolicy parses any argocd-rbac-cm policy and decides requests with
// it, in both match modes: nothing panics, and a policy that grants
// nothing to a subject allows it nothing beyond the default role.
func FuzzPolicy(f *testing.F) {
	f.Add("p, role:dev, applications, get, */*, allow\ng, alice, role:dev\n", "alice", "applications", "get", "default/guestbook", false)
	f.Add(`p, "a,b", applications, *, proj/*, deny`+"\n# comment\n", "a,b", "applications", "sync", "proj/x", true)
	f.Add("p, role:x, *, *, .*(, allow\ng, bob, role:x\ng, role:x, role:x\n", "bob", "clusters", "delete", "https://x", true)
	f.Add("p\ng\n,,,\n\"unclosed\n", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, policy, subject, resource, action, object string, regex bool) {
		mode := MatchModeGlob
		if regex {
			mode = MatchModeRegex
		}
		cfg, _ := ConfigFromData(map[string]string{KeyPolicy: policy, KeyMatchMode: mode})
		e := New(cfg)
		allowed := e.Allowed(Subject{Name: subject, Groups: []string{subject + "-group"}}, resource, action, object)
		if allowed && len(cfg.Policy.Rules) == 0 && cfg.DefaultRole == "" {
			if !New(Config{MatchMode: mode}).Allowed(Subject{Name: subject}, resource, action, object) {
				t.Fatalf("%q allowed %s %s %s with a policy of no rules", subject, action, resource, object)
			}
		}
	})
}
