package settings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// defaultDomain is the chart's global.domain.
const defaultDomain = "argocd.example.com"

// notificationKeys are the notifications.* keys that are settings; the
// others configure the controller's Deployment.
var notificationKeys = map[string]bool{
	"enabled": true, "argocdUrl": true, "context": true, "notifiers": true, "subscriptions": true,
	"templates": true, "triggers": true, "secret": true, "cm": true,
}

// notifications maps notifications.* to argocd-notifications-cm and its
// Secret, as the chart's templates do.
func (m *mapper) notifications(n, global map[string]any) error {
	if !enabled(n, "enabled") {
		m.warnf("notifications.enabled is false: the chart makes no notifications settings, so notifications.* is left out")
		return nil
	}
	var other []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		if !notificationKeys[k] {
			other = append(other, "notifications."+k)
		}
	}
	if len(other) > 0 {
		m.warnf("%s: the notifications controller's workload values, not settings: left out", strings.Join(other, ", "))
	}
	if enabled(object(n["cm"]), "create") {
		data, err := m.notificationsData(n, global)
		if err != nil {
			return err
		}
		o := newObject("ConfigMap", NotificationsConfigMap, m.opts.Namespace, nil)
		o.Object["data"] = stringMap(data)
		m.out.Objects = append(m.out.Objects, o)
	}
	return m.notificationsSecret(object(n["secret"]))
}

// notificationsData is argocd-notifications-cm's data: the context (with
// argocdUrl), the notifiers' service.* keys, the template.* and trigger.*
// keys as they are, and the subscriptions as YAML.
func (m *mapper) notificationsData(n, global map[string]any) (map[string]string, error) {
	url, _ := scalar("", n["argocdUrl"])
	if url == "" {
		domain, _ := scalar("", global["domain"])
		if domain == "" {
			domain = defaultDomain
		}
		url = "https://" + domain
	}
	ctx := map[string]any{"argocdUrl": url}
	maps.Copy(ctx, object(n["context"]))
	b, err := yaml.Marshal(ctx)
	if err != nil {
		return nil, fmt.Errorf("settings %s: notifications.context: %w", m.path, err)
	}
	data := map[string]string{"context": string(b)}
	for _, section := range []struct{ field, prefix string }{
		{"notifiers", "service."}, {"templates", "template."}, {"triggers", "trigger."},
	} {
		for k, v := range object(n[section.field]) {
			if !strings.HasPrefix(k, section.prefix) {
				m.warnf("notifications.%s.%s: the controller reads only %s* keys; written as it is", section.field, k, section.prefix)
			}
			s, err := text(v)
			if err != nil {
				return nil, fmt.Errorf("settings %s: notifications.%s.%s: %w", m.path, section.field, k, err)
			}
			data[k] = s
		}
	}
	if subs, ok := n["subscriptions"]; ok && subs != nil {
		b, err := yaml.Marshal(subs)
		if err != nil {
			return nil, fmt.Errorf("settings %s: notifications.subscriptions: %w", m.path, err)
		}
		data["subscriptions"] = string(b)
	}
	return data, nil
}

// notificationsSecret maps notifications.secret to its Secret, named by
// secret.name (argocd-notifications-secret by default).
func (m *mapper) notificationsSecret(section map[string]any) error {
	if !enabled(section, "create") {
		return nil
	}
	name, _ := scalar("", section["name"])
	if name == "" {
		name = NotificationsSecret
	}
	data := map[string]string{}
	for k, v := range object(section["items"]) {
		s, err := scalar("notifications.secret.items."+k, v)
		if err != nil {
			return fmt.Errorf("settings %s: %w", m.path, err)
		}
		data[k] = s
	}
	m.unknown("notifications.secret", section, map[string]bool{"create": true, "name": true, "items": true, "labels": true, "annotations": true})
	m.addSecret(name, section, data)
	return nil
}
