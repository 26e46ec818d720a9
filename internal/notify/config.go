package notify

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// The settings objects, as Argo CD names them.
const (
	ConfigMapName = "argocd-notifications-cm"
	SecretName    = "argocd-notifications-secret"
)

// Config is argocd-notifications-cm read with argocd-notifications-secret:
// services, triggers, templates, default subscriptions and triggers, and
// the shared template context.
type Config struct {
	// Services are the notification services by name: service.slack is
	// named slack, service.webhook.github is named github.
	Services map[string]ServiceConfig
	// Triggers are the triggers by name (trigger.on-deployed: on-deployed).
	Triggers map[string]*Trigger
	// Templates are the templates by name (template.app-deployed).
	Templates map[string]*Template
	// Subscriptions are the `subscriptions` key: recipients every app
	// matching a selector gets.
	Subscriptions []DefaultSubscription
	// DefaultTriggers are used by a subscription that names no trigger;
	// ServiceDefaultTriggers (defaultTriggers.<service>) win for their
	// service.
	DefaultTriggers        []string
	ServiceDefaultTriggers map[string][]string
	// Context is the `context` key, seen by templates as .context.
	Context map[string]string
	// Secrets are the Secret's keys, seen by templates as .secrets.
	Secrets map[string]string
	// Errors lists the keys that could not be read, each naming the
	// ConfigMap and the key; the rest of the configuration works.
	Errors []error
}

// ServiceConfig is one service.<type>[.<name>] key: its type and its
// options, with $secret references replaced.
type ServiceConfig struct {
	Type string
	Name string
	// Options is the key's YAML as JSON.
	Options []byte
}

// ConfigError is a key of argocd-notifications-cm that cannot be read.
type ConfigError struct {
	Key string
	Err error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: %s: %v", ConfigMapName, e.Key, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ParseConfig reads the ConfigMap's data with the Secret's data (either
// may be nil). A key that cannot be read is left out and listed in
// Config.Errors; the others work.
func ParseConfig(cm map[string]string, secret map[string][]byte) *Config {
	cfg := &Config{
		Services:               map[string]ServiceConfig{},
		Triggers:               map[string]*Trigger{},
		Templates:              map[string]*Template{},
		ServiceDefaultTriggers: map[string][]string{},
		Context:                map[string]string{},
		Secrets:                map[string]string{},
	}
	for k, v := range secret {
		cfg.Secrets[k] = string(v)
	}
	keys := slices.Sorted(maps.Keys(cm))
	for _, k := range keys {
		if err := cfg.parseKey(k, cm[k]); err != nil {
			cfg.Errors = append(cfg.Errors, &ConfigError{Key: k, Err: err})
		}
	}
	return cfg
}

func (c *Config) parseKey(k, v string) error {
	switch {
	case k == "subscriptions":
		return c.parseSubscriptions(v)
	case k == "defaultTriggers":
		return yaml.Unmarshal([]byte(v), &c.DefaultTriggers)
	case k == "context":
		return yaml.Unmarshal([]byte(v), &c.Context)
	case strings.HasPrefix(k, "defaultTriggers."):
		var names []string
		if err := yaml.Unmarshal([]byte(v), &names); err != nil {
			return err
		}
		c.ServiceDefaultTriggers[strings.TrimPrefix(k, "defaultTriggers.")] = names
	case strings.HasPrefix(k, "template."):
		t, err := ParseTemplate(strings.TrimPrefix(k, "template."), v)
		if err != nil {
			return err
		}
		c.Templates[t.Name] = t
	case strings.HasPrefix(k, "trigger."):
		t, err := ParseTrigger(strings.TrimPrefix(k, "trigger."), v)
		if err != nil {
			return err
		}
		c.Triggers[t.Name] = t
	case strings.HasPrefix(k, "service."):
		return c.parseService(k, v)
	}
	return nil
}

func (c *Config) parseService(k, v string) error {
	parts := strings.Split(k, ".")
	var typ, name string
	switch len(parts) {
	case 2:
		typ, name = parts[1], parts[1]
	case 3:
		typ, name = parts[1], parts[2]
	default:
		return fmt.Errorf("want service.<type> or service.<type>.<name>")
	}
	if !slices.Contains(ServiceTypes(), typ) {
		return fmt.Errorf("service type %q is not supported (supported: %s)", typ, strings.Join(ServiceTypes(), ", "))
	}
	opts, err := replaceSecrets(v, c.Secrets)
	if err != nil {
		return err
	}
	c.Services[name] = ServiceConfig{Type: typ, Name: name, Options: opts}
	return nil
}

// secretRef is a reference to a key of argocd-notifications-secret in a
// service's options, as Argo CD reads them: $key.
var secretRef = regexp.MustCompile(`[$][\w-]+`)

// replaceSecrets replaces $key in every string of a service's YAML with
// the Secret's value and returns the result as JSON. A reference to a key
// the Secret lacks is left as it is.
func replaceSecrets(in string, secrets map[string]string) ([]byte, error) {
	var node yaml3.Node
	if err := yaml3.Unmarshal([]byte(in), &node); err != nil {
		return nil, err
	}
	var walk func(n *yaml3.Node)
	walk = func(n *yaml3.Node) {
		if n.Kind == yaml3.ScalarNode && n.Tag == "!!str" {
			n.Value = secretRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
				if v, ok := secrets[ref[1:]]; ok {
					return v
				}
				return ref
			})
		}
		for _, child := range n.Content {
			walk(child)
		}
	}
	walk(&node)
	out, err := yaml3.Marshal(&node)
	if err != nil {
		return nil, err
	}
	return yaml.YAMLToJSON(out)
}

// TriggerNames lists the triggers, sorted.
func (c *Config) TriggerNames() []string { return slices.Sorted(maps.Keys(c.Triggers)) }

// TemplateNames lists the templates, sorted.
func (c *Config) TemplateNames() []string { return slices.Sorted(maps.Keys(c.Templates)) }

// Redact replaces every value of argocd-notifications-secret in s, so an
// error that quotes a URL or a header never shows a credential.
func (c *Config) Redact(s string) string {
	vals := make([]string, 0, len(c.Secrets))
	for _, v := range c.Secrets {
		if len(v) >= 4 {
			vals = append(vals, v)
		}
	}
	// Longest first, so a secret containing another is masked whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		s = strings.ReplaceAll(s, v, "******")
	}
	return s
}
