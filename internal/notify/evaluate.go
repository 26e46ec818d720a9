package notify

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Pending is a notification a trigger decided to send.
type Pending struct {
	Trigger   string
	Templates []string
	Dest      Destination
}

// Outcome is what one look at an app decided.
type Outcome struct {
	// Send lists the notifications to send now.
	Send []Pending
	// Changed is set when the state was changed (to be written back).
	Changed bool
	// Errors are subscriptions to triggers that do not exist and
	// expressions that failed.
	Errors []error
}

// Evaluate runs every trigger the app is subscribed to against it and
// updates st: a condition that holds and was not notified yet (for its
// oncePer value) is marked and its destinations go in Send; a condition
// that no longer holds is forgotten, so it fires again. The app's
// subscriptions come from its annotations, its project's annotations and
// the `subscriptions` key.
func (c *Config) Evaluate(app map[string]any, projectAnnotations map[string]string, env Env, st State, m Metrics) Outcome {
	u := unstructured.Unstructured{Object: app}
	dests := c.Destinations(u.GetLabels(), u.GetAnnotations(), projectAnnotations)
	var out Outcome
	if len(dests) == 0 {
		return out
	}
	vars := c.Vars(app, env, Destination{})
	now := time.Now()
	if env.Now != nil {
		now = env.Now()
	}
	for _, name := range dests.Triggers() {
		t, ok := c.Triggers[name]
		if !ok {
			out.Errors = append(out.Errors, fmt.Errorf("trigger %q is not defined in %s", name, ConfigMapName))
			continue
		}
		for _, r := range t.Run(vars) {
			if m != nil {
				m.ObserveNotificationTrigger(name, r.Triggered)
			}
			if r.Err != nil {
				out.Errors = append(out.Errors, r.Err)
			}
			for _, d := range dests[name] {
				key := stateKey(name, r, d)
				if !r.Triggered {
					out.Changed = st.unmark(key) || out.Changed
					continue
				}
				if st.mark(key, now) {
					out.Changed = true
					out.Send = append(out.Send, Pending{Trigger: name, Templates: r.Condition.Send, Dest: d})
				}
			}
		}
	}
	return out
}

// Render builds the notification of p for app: the templates rendered
// with the destination's variables.
func (c *Config) Render(app map[string]any, env Env, p Pending) (*Notification, error) {
	return RenderAll(c.Templates, p.Templates, c.Vars(app, env, p.Dest))
}
