package notify

import (
	"crypto/sha1" //nolint:gosec // a condition's key, as Argo CD computes it; not a security use
	"encoding/base64"
	"fmt"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"sigs.k8s.io/yaml"
)

// Trigger is one trigger.<name> key: conditions, each sending templates
// when its expression holds.
type Trigger struct {
	Name       string
	Conditions []*Condition
}

// Condition is one entry of a trigger: `when` is an expr expression over
// the app (and the functions of Vars); `oncePer`, when set, is evaluated
// when `when` holds, and the notification goes out once per value.
type Condition struct {
	When        string   `json:"when,omitempty"`
	OncePer     string   `json:"oncePer,omitempty"`
	Description string   `json:"description,omitempty"`
	Send        []string `json:"send,omitempty"`

	when    *vm.Program
	oncePer *vm.Program
	// key identifies the condition in the notified state: its index and
	// a hash of its expression, as Argo CD writes it.
	key string
}

// ParseTrigger reads a trigger's YAML: a list of conditions, or a single
// condition. Every expression is compiled here, so a typo is reported
// once, with the trigger's name.
func ParseTrigger(name, v string) (*Trigger, error) {
	var conds []*Condition
	if err := yaml.Unmarshal([]byte(v), &conds); err != nil {
		var one Condition
		if err1 := yaml.Unmarshal([]byte(v), &one); err1 != nil {
			return nil, err
		}
		conds = []*Condition{&one}
	}
	t := &Trigger{Name: name, Conditions: conds}
	for i, c := range conds {
		if c == nil {
			return nil, fmt.Errorf("condition %d is empty", i)
		}
		when := c.When
		if when == "" {
			when = "false"
		}
		var err error
		if c.when, err = expr.Compile(when); err != nil {
			return nil, fmt.Errorf("condition %d: when: %w", i, err)
		}
		if c.OncePer != "" {
			if c.oncePer, err = expr.Compile(c.OncePer); err != nil {
				return nil, fmt.Errorf("condition %d: oncePer: %w", i, err)
			}
		}
		c.key = fmt.Sprintf("[%d].%s", i, conditionHash(c.When))
	}
	return t, nil
}

func conditionHash(when string) string {
	h := sha1.Sum([]byte(when)) //nolint:gosec // see the import
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// ConditionResult is the outcome of one condition for one app.
type ConditionResult struct {
	Condition *Condition
	// Triggered is set when `when` returned true.
	Triggered bool
	// OncePer is oncePer's value, when the condition has one and fired.
	OncePer string
	// Err is why an expression failed; the condition then does not fire.
	Err error
}

// Key is the condition's key in the notified state.
func (r ConditionResult) Key() string { return r.Condition.key }

// Run evaluates every condition of the trigger against vars. An
// expression that fails (app.status.operationState.phase when there is no
// operation yet) does not fire; the error says why.
func (t *Trigger) Run(vars map[string]any) []ConditionResult {
	out := make([]ConditionResult, 0, len(t.Conditions))
	for _, c := range t.Conditions {
		r := ConditionResult{Condition: c}
		v, err := runExpr(c.when, vars)
		if err != nil {
			r.Err = fmt.Errorf("trigger %s: when %q: %w", t.Name, c.When, err)
			out = append(out, r)
			continue
		}
		r.Triggered, _ = v.(bool)
		if r.Triggered && c.oncePer != nil {
			v, err := runExpr(c.oncePer, vars)
			if err != nil {
				r.Err = fmt.Errorf("trigger %s: oncePer %q: %w", t.Name, c.OncePer, err)
			} else {
				r.OncePer = fmt.Sprintf("%v", v)
			}
		}
		out = append(out, r)
	}
	return out
}

// runExpr runs a program; a panic in a function (time.Parse of a bad
// timestamp) is an error, as in Argo CD.
func runExpr(p *vm.Program, vars map[string]any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return expr.Run(p, vars)
}
