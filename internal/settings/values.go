package settings

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// partOf is the label the chart puts on its settings objects.
const partOf = "app.kubernetes.io/part-of"

// mapper turns an argo-cd chart values file into the chart's settings
// objects, collecting warnings for what it leaves out.
type mapper struct {
	path string
	opts Options
	out  *Settings
}

func fromValues(path string, values map[string]any, opts Options) (*Settings, error) {
	m := &mapper{path: path, opts: opts, out: &Settings{FromValues: true}}
	var ignored []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		switch k {
		case "configs":
			if err := m.configs(object(values[k])); err != nil {
				return nil, err
			}
		case "notifications":
			if err := m.notifications(object(values[k]), object(values["global"])); err != nil {
				return nil, err
			}
		case "global":
			if rest := without(object(values[k]), "domain"); len(rest) > 0 {
				ignored = append(ignored, k)
			}
		default:
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		m.warnf("%s: the chart's workload values, not settings: left out", strings.Join(ignored, ", "))
	}
	return m.out, nil
}

func (m *mapper) warnf(format string, args ...any) {
	m.out.Warnings = append(m.out.Warnings, m.path+": "+fmt.Sprintf(format, args...))
}

// configs maps configs.* as the chart's argocd-configs/ templates do.
func (m *mapper) configs(c map[string]any) error {
	var unused []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		var err error
		switch k {
		case "cm":
			err = m.configMap("configs.cm", ConfigMap, object(c[k]), "create", m.scalarData(false))
		case "params":
			err = m.configMap("configs.params", ParamsConfigMap, object(c[k]), "create", m.scalarData(true))
		case "rbac":
			err = m.configMap("configs.rbac", RBACConfigMap, object(c[k]), "create", m.yamlData)
		case "secret":
			err = m.secret(object(c[k]))
		case "repositories", "credentialTemplates":
			err = m.repoSecrets(k, object(c[k]), object(c[k+"Annotations"]))
		case "repositoriesAnnotations", "credentialTemplatesAnnotations":
		case "ssh":
			err = m.knownHosts(object(c[k]))
		case "tls":
			err = m.configMap("configs.tls", TLSCertsConfigMap, object(c[k]), "create",
				func(_ string, v map[string]any) (map[string]string, error) {
					return m.yamlData("configs.tls.certificates", object(v["certificates"]))
				})
		default:
			unused = append(unused, "configs."+k)
		}
		if err != nil {
			return err
		}
	}
	if len(unused) > 0 {
		m.warnf("%s: not read by wavecd: left out", strings.Join(unused, ", "))
	}
	return nil
}

// dataFunc turns a values section into a ConfigMap's data.
type dataFunc func(field string, section map[string]any) (map[string]string, error)

// configMap adds the ConfigMap name made from a section with a create flag
// (true by default) and annotations.
func (m *mapper) configMap(field, name string, section map[string]any, createKey string, data dataFunc) error {
	if !enabled(section, createKey) {
		if len(without(section, createKey, "annotations")) > 0 {
			m.warnf("%s.%s is false: the chart makes no %s, so its keys are left out", field, createKey, name)
		}
		return nil
	}
	d, err := data(field, without(section, createKey, "annotations"))
	if err != nil {
		return err
	}
	o := newObject("ConfigMap", name, m.opts.Namespace, object(section["annotations"]))
	if len(d) > 0 {
		o.Object["data"] = stringMap(d)
	}
	m.out.Objects = append(m.out.Objects, o)
	return nil
}

// scalarData is a ConfigMap's data of a section's values as text, as the
// chart's argocd-cm (which leaves empty values out) and
// argocd-cmd-params-cm (which keeps them, keepEmpty) write it.
func (m *mapper) scalarData(keepEmpty bool) dataFunc {
	return func(field string, section map[string]any) (map[string]string, error) {
		out := map[string]string{}
		for k, v := range section {
			s, err := scalar(field+"."+k, v)
			if err != nil {
				m.warnf("%v: left out", err)
				continue
			}
			if s != "" || keepEmpty {
				out[k] = s
			}
		}
		return out, nil
	}
}

// yamlData is a section written as YAML, key by key (the chart's toYaml):
// a string stays as it is, anything else becomes its YAML text.
func (m *mapper) yamlData(field string, section map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range section {
		s, err := text(v)
		if err != nil {
			return nil, fmt.Errorf("settings %s: %s.%s: %w", m.path, field, k, err)
		}
		out[k] = s
	}
	return out, nil
}

// secretKeys are configs.secret's fields and their argocd-secret keys.
var secretKeys = []struct{ field, key string }{
	{"githubSecret", "webhook.github.secret"},
	{"gitlabSecret", "webhook.gitlab.secret"},
	{"bitbucketServerSecret", "webhook.bitbucketserver.secret"},
	{"bitbucketUUID", "webhook.bitbucket.uuid"},
	{"gogsSecret", "webhook.gogs.secret"},
}

// secret maps configs.secret to argocd-secret.
func (m *mapper) secret(section map[string]any) error {
	if !enabled(section, "createSecret") {
		if len(without(section, "createSecret", "annotations", "labels")) > 0 {
			m.warnf("configs.secret.createSecret is false: the chart makes no %s, so its keys are left out", Secret)
		}
		return nil
	}
	data := map[string]string{}
	known := map[string]bool{"createSecret": true, "annotations": true, "labels": true, "extra": true,
		"azureDevops": true, "argocdServerAdminPassword": true, "argocdServerAdminPasswordMtime": true}
	for _, sk := range secretKeys {
		known[sk.field] = true
		if v, _ := scalar("", section[sk.field]); v != "" {
			data[sk.key] = v
		}
	}
	azure := object(section["azureDevops"])
	if u, _ := scalar("", azure["username"]); u != "" {
		if p, _ := scalar("", azure["password"]); p != "" {
			data["webhook.azuredevops.username"], data["webhook.azuredevops.password"] = u, p
		}
	}
	if p, _ := scalar("", section["argocdServerAdminPassword"]); p != "" {
		data["admin.password"] = p
		mtime, _ := scalar("", section["argocdServerAdminPasswordMtime"])
		if mtime == "" {
			mtime = m.opts.Now().UTC().Format("2006-01-02T15:04:05Z")
		}
		data["admin.passwordMtime"] = mtime
	}
	for k, v := range object(section["extra"]) {
		s, err := scalar("configs.secret.extra."+k, v)
		if err != nil {
			return fmt.Errorf("settings %s: %w", m.path, err)
		}
		data[k] = s
	}
	m.unknown("configs.secret", section, known)
	m.addSecret(Secret, section, data)
	return nil
}

// addSecret adds an Opaque Secret with a section's annotations and labels.
func (m *mapper) addSecret(name string, section map[string]any, data map[string]string) {
	o := newObject("Secret", name, m.opts.Namespace, object(section["annotations"]))
	addLabels(o, object(section["labels"]))
	o.Object["type"] = "Opaque"
	if len(data) > 0 {
		o.Object["data"] = encoded(data)
	}
	m.out.Objects = append(m.out.Objects, o)
}

// repoSecrets maps configs.repositories (or credentialTemplates) to one
// Secret per entry, labelled as a repository (or repo-creds) Secret.
func (m *mapper) repoSecrets(field string, entries, annotations map[string]any) error {
	prefix, typ := "argocd-repo-", "repository"
	if field == "credentialTemplates" {
		prefix, typ = "argocd-repo-creds-", "repo-creds"
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		data := map[string]string{}
		for k, v := range object(entries[name]) {
			s, err := scalar(fmt.Sprintf("configs.%s.%s.%s", field, name, k), v)
			if err != nil {
				return fmt.Errorf("settings %s: %w", m.path, err)
			}
			data[k] = s
		}
		o := newObject("Secret", prefix+name, m.opts.Namespace, annotations)
		addLabels(o, map[string]any{"argocd.argoproj.io/secret-type": typ})
		o.Object["data"] = encoded(data)
		m.out.Objects = append(m.out.Objects, o)
	}
	return nil
}

// knownHosts maps configs.ssh to argocd-ssh-known-hosts-cm.
func (m *mapper) knownHosts(section map[string]any) error {
	return m.configMap("configs.ssh", KnownHostsConfigMap, section, "create", func(field string, s map[string]any) (map[string]string, error) {
		hosts, _ := scalar("", s["knownHosts"])
		if extra, _ := scalar("", s["extraHosts"]); extra != "" {
			hosts = strings.TrimRight(hosts, "\n") + "\n" + extra
		}
		m.unknown(field, s, map[string]bool{"knownHosts": true, "extraHosts": true})
		if hosts == "" {
			return nil, nil
		}
		return map[string]string{"ssh_known_hosts": hosts}, nil
	})
}

// unknown warns about the keys of section not in known.
func (m *mapper) unknown(field string, section map[string]any, known map[string]bool) {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(section)) {
		if !known[k] {
			out = append(out, field+"."+k)
		}
	}
	if len(out) > 0 {
		m.warnf("%s: not a key the chart knows: left out", strings.Join(out, ", "))
	}
}

func newObject(kind, name, ns string, annotations map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind}}
	o.SetName(name)
	o.SetNamespace(ns)
	o.SetLabels(map[string]string{partOf: "argocd"})
	if len(annotations) > 0 {
		a := map[string]string{}
		for k, v := range annotations {
			a[k], _ = scalar("", v)
		}
		o.SetAnnotations(a)
	}
	return o
}

func addLabels(o *unstructured.Unstructured, extra map[string]any) {
	l := o.GetLabels()
	for k, v := range extra {
		l[k], _ = scalar("", v)
	}
	o.SetLabels(l)
}

// enabled reads a create flag, true unless set false.
func enabled(section map[string]any, key string) bool {
	b, ok := section[key].(bool)
	return !ok || b
}

// object returns v as a map, or an empty one.
func object(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// without returns m without keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// scalar is a value as the chart's toString writes it; maps and lists are
// refused (the chart would write Go's text of them).
func scalar(field string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	kind := "a map"
	if _, ok := v.([]any); ok {
		kind = "a list"
	}
	return "", fmt.Errorf("%s: %s, want a string, number or boolean", field, kind)
}

// text is a value as the chart's toYaml writes it under a key.
func text(v any) (string, error) {
	if s, err := scalar("", v); err == nil {
		return s, nil
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func encoded(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return out
}
