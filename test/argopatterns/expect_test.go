package argopatterns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// expectation is a pattern's expect.yaml: how to rehearse it and what a
// user expects to see at the end.
type expectation struct {
	Description string `json:"description"`
	// Root is the root manifest inside the pattern.
	Root string `json:"root"`
	// Settings is a settings file inside the pattern (argocd-cm, ...).
	Settings string `json:"settings,omitempty"`
	// Plugins is a folder of ConfigManagementPlugin files in the pattern.
	Plugins string `json:"plugins,omitempty"`
	// Settled says whether up settles (default true); a pattern that must
	// not settle ends at the stall limit.
	Settled *bool `json:"settled,omitempty"`
	// SyncByHand are apps the test syncs the way a user would once up says
	// they wait for it.
	SyncByHand []string `json:"syncByHand,omitempty"`
	// Apps are the Applications at the end, by name.
	Apps map[string]appState `json:"apps"`
	// Runs counts the Jobs created, by generateName or name.
	Runs map[string]int `json:"runs,omitempty"`
	// Live counts the Jobs left at the end, by generateName or name.
	Live map[string]int `json:"live,omitempty"`
	// Absent are objects ("Kind namespace/name") that must not exist.
	Absent []string `json:"absent,omitempty"`
	// Order are objects ("Kind namespace/name", a generateName for a
	// generated name) created in this order.
	Order []string `json:"order,omitempty"`
	// Objects are objects whose fields must hold these values.
	Objects []objectFields `json:"objects,omitempty"`
	// Output are lines, or parts of lines, up prints.
	Output []string `json:"output,omitempty"`
	// DeleteRoot deletes the root app after the bootstrap and expects every
	// Application and every object they made to be gone.
	DeleteRoot bool `json:"deleteRoot,omitempty"`
	// Operator stands in for the process of an operator the pattern
	// installs, for DeleteRoot (see operator_test.go).
	Operator *operatorStandIn `json:"operator,omitempty"`
}

// objectFields names an object and the values some of its fields hold,
// by dotted path ("spec.replicas"; a dot inside a key is escaped with a backslash).
type objectFields struct {
	Kind      string         `json:"kind"`
	Namespace string         `json:"namespace,omitempty"`
	Name      string         `json:"name"`
	Fields    map[string]any `json:"fields"`
}

// fieldPath splits a dotted path, honouring "\." inside a key.
func fieldPath(path string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			cur.WriteByte('.')
			i++
		case path[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	return append(out, cur.String())
}

// appState is an Application's expected state; empty fields are not checked.
type appState struct {
	Sync   string `json:"sync,omitempty"`
	Health string `json:"health,omitempty"`
	// Message is part of the last operation's message or a condition's.
	Message string `json:"message,omitempty"`
}

func loadExpectation(dir string) (*expectation, error) {
	data, err := os.ReadFile(filepath.Join(dir, "expect.yaml"))
	if err != nil {
		return nil, err
	}
	e := &expectation{}
	if err := yaml.UnmarshalStrict(data, e); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "expect.yaml"), err)
	}
	if e.Root == "" || len(e.Apps) == 0 {
		return nil, fmt.Errorf("%s: root and apps are required", filepath.Join(dir, "expect.yaml"))
	}
	for _, o := range append(append([]string{}, e.Order...), e.Absent...) {
		if _, err := parseObject(o); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "expect.yaml"), err)
		}
	}
	return e, nil
}

func (e *expectation) settles() bool { return e.Settled == nil || *e.Settled }

// stallAfter is how long up waits without change: short for a pattern
// that is meant to stall, generous for one that must settle.
func (e *expectation) stallAfter() time.Duration {
	if e.settles() {
		return time.Minute
	}
	return 15 * time.Second
}

// objectRef is "Kind namespace/name"; a cluster-scoped object has an
// empty namespace ("CustomResourceDefinition /crontabs.stable.example.com").
type objectRef struct {
	kind, namespace, name string
}

func (r objectRef) String() string { return r.kind + " " + r.namespace + "/" + r.name }

func parseObject(s string) (objectRef, error) {
	kind, rest, ok := strings.Cut(s, " ")
	ns, name, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || kind == "" || name == "" {
		return objectRef{}, fmt.Errorf("object %q: want \"Kind namespace/name\"", s)
	}
	return objectRef{kind: kind, namespace: ns, name: name}, nil
}
