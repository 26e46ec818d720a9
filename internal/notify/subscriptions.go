package notify

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The annotations Argo CD's notifications read and write.
const (
	// AnnotationPrefix starts every subscription annotation:
	// notifications.argoproj.io/subscribe.<trigger>.<service>: recipients.
	AnnotationPrefix = "notifications.argoproj.io"
	// AnnotationNotified holds, on each Application, which notifications
	// were sent (the oncePer state), so a restart sends nothing twice.
	AnnotationNotified = "notified." + AnnotationPrefix

	subscribePrefix     = AnnotationPrefix + "/subscribe."
	subscriptionsPrefix = AnnotationPrefix + "/subscriptions"
)

// Destination is a service and one recipient of it: a Slack channel, an
// email address, or "" for a webhook.
type Destination struct {
	Service   string `json:"service"`
	Recipient string `json:"recipient"`
}

func (d Destination) String() string {
	if d.Recipient == "" {
		return d.Service
	}
	return d.Service + ":" + d.Recipient
}

// Destinations are the destinations of each trigger.
type Destinations map[string][]Destination

// add appends dests to trigger, leaving out those it has.
func (d Destinations) add(trigger string, dests ...Destination) {
	for _, dest := range dests {
		if !slices.Contains(d[trigger], dest) {
			d[trigger] = append(d[trigger], dest)
		}
	}
}

// Triggers lists the triggers, sorted.
func (d Destinations) Triggers() []string { return slices.Sorted(maps.Keys(d)) }

// DefaultSubscription is one entry of the `subscriptions` key: recipients
// ("service:recipient", or a webhook's name) of the triggers (default
// triggers when none) for the apps whose labels match the selector.
type DefaultSubscription struct {
	Recipients []string
	Triggers   []string
	Selector   labels.Selector
}

type rawSubscription struct {
	Recipients []string `json:"recipients"`
	Triggers   []string `json:"triggers"`
	Selector   string   `json:"selector"`
}

// UnmarshalJSON reads an entry, parsing its selector.
func (s *DefaultSubscription) UnmarshalJSON(b []byte) error {
	var raw rawSubscription
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	sel, err := labels.Parse(raw.Selector)
	if err != nil {
		return fmt.Errorf("selector %q: %w", raw.Selector, err)
	}
	*s = DefaultSubscription{Recipients: raw.Recipients, Triggers: raw.Triggers, Selector: sel}
	return nil
}

func (c *Config) parseSubscriptions(v string) error {
	return yaml.Unmarshal([]byte(v), &c.Subscriptions)
}

// parseRecipient splits "service:recipient" (a bare name is a service
// with no recipient, such as a webhook).
func parseRecipient(s string) Destination {
	service, recipient, _ := strings.Cut(s, ":")
	return Destination{Service: service, Recipient: recipient}
}

// Destinations returns who is subscribed to what for an app with these
// labels and annotations, whose project carries projectAnnotations: the
// `subscriptions` key, then the app's annotations, then the project's,
// without duplicates.
func (c *Config) Destinations(appLabels, appAnnotations, projectAnnotations map[string]string) Destinations {
	out := Destinations{}
	for _, s := range c.Subscriptions {
		if s.Selector != nil && !s.Selector.Matches(labels.Set(appLabels)) {
			continue
		}
		triggers := s.Triggers
		if len(triggers) == 0 {
			triggers = c.DefaultTriggers
		}
		for _, t := range triggers {
			for _, r := range s.Recipients {
				out.add(t, parseRecipient(r))
			}
		}
	}
	for _, annotations := range []map[string]string{appAnnotations, projectAnnotations} {
		for _, sub := range ParseSubscriptions(annotations) {
			triggers := []string{sub.Trigger}
			if sub.Trigger == "" {
				triggers = c.DefaultTriggers
				if t, ok := c.ServiceDefaultTriggers[sub.Service]; ok {
					triggers = t
				}
			}
			for _, t := range triggers {
				for _, r := range sub.Recipients {
					out.add(t, Destination{Service: sub.Service, Recipient: r})
				}
			}
		}
	}
	return out
}

// Subscription is one subscription an annotation makes: a trigger ("" for
// the default triggers), a service and its recipients.
type Subscription struct {
	Trigger    string
	Service    string
	Recipients []string
	// Annotation is the annotation it comes from.
	Annotation string
}

// ParseSubscriptions reads the subscription annotations, as Argo CD does:
//
//	notifications.argoproj.io/subscribe.<trigger>.<service>: "a;b"
//	notifications.argoproj.io/subscribe.<service>: "a"    (default triggers)
//	notifications.argoproj.io/subscriptions: |            (a YAML list)
//	  - trigger: [on-sync-failed]
//	    destinations: [{service: slack, recipients: [ops]}]
//
// An empty value subscribes one recipient "" (a webhook has none). The
// result is sorted by annotation.
func ParseSubscriptions(annotations map[string]string) []Subscription {
	var out []Subscription
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		v := annotations[k]
		switch {
		case strings.HasPrefix(k, subscribePrefix):
			trigger, service, ok := strings.Cut(strings.TrimPrefix(k, subscribePrefix), ".")
			if !ok {
				trigger, service = "", trigger
			}
			out = append(out, Subscription{Trigger: trigger, Service: service, Recipients: splitRecipients(v), Annotation: k})
		case strings.HasPrefix(k, subscriptionsPrefix):
			out = append(out, parseSubscriptionList(k, v)...)
		}
	}
	return out
}

// splitRecipients splits "a;b" (an empty value is one empty recipient).
func splitRecipients(v string) []string {
	if strings.TrimSpace(v) == "" {
		return []string{""}
	}
	var out []string
	for _, r := range strings.Split(v, ";") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// parseSubscriptionList reads the notifications.argoproj.io/subscriptions
// annotation; an entry without triggers uses the default triggers, one
// without destinations subscribes nobody.
func parseSubscriptionList(k, v string) []Subscription {
	var list []struct {
		Trigger      []string `json:"trigger"`
		Destinations []struct {
			Service    string   `json:"service"`
			Recipients []string `json:"recipients"`
		} `json:"destinations"`
	}
	if err := yaml.Unmarshal([]byte(v), &list); err != nil {
		return nil
	}
	var out []Subscription
	for _, e := range list {
		triggers := e.Trigger
		if len(triggers) == 0 {
			triggers = []string{""}
		}
		for _, t := range triggers {
			for _, d := range e.Destinations {
				out = append(out, Subscription{Trigger: t, Service: d.Service, Recipients: d.Recipients, Annotation: k})
			}
		}
	}
	return out
}
