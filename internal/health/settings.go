package health

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"maps"

	"sigs.k8s.io/yaml"
)

// argocd-cm keys that health assessment reads.
const (
	// KeyCustomizations is the legacy YAML block of resource overrides.
	KeyCustomizations = "resource.customizations"
	// KeyHealthPrefix starts a per-kind health script key:
	// resource.customizations.health.<group>_<Kind>.
	KeyHealthPrefix = "resource.customizations.health."
	// KeyOpenLibsPrefix starts a per-kind key that gives the script all Lua
	// libraries: resource.customizations.useOpenLibs.<group>_<Kind>.
	KeyOpenLibsPrefix = "resource.customizations.useOpenLibs."
	// KeyApplicationHealth set to "false" turns off wavecd's health for child
	// Applications (Argo CD has none since 1.8).
	KeyApplicationHealth = "wavecd.application.health"
	// KeyGenericConditions set to "true" turns on the generic condition check
	// for custom resources without a check of their own.
	KeyGenericConditions = "wavecd.health.genericConditions"
)

// SettingsError is a malformed argocd-cm key.
type SettingsError struct {
	Key string
	Err error
}

func (e *SettingsError) Error() string { return "argocd-cm key " + e.Key + ": " + e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// Settings is what health assessment takes from the argocd-cm data map.
type Settings struct {
	// ApplicationHealth makes child Applications report their status.health.
	ApplicationHealth bool
	// GenericConditions turns on the generic condition check.
	GenericConditions bool

	overrides scriptSet
	// openLibs holds the customization keys with useOpenLibs set, whether or
	// not argocd-cm also holds their script.
	openLibs map[string]bool
}

// legacyOverride is the part of a resource.customizations entry about health.
type legacyOverride struct {
	HealthLua   string `json:"health.lua"`
	UseOpenLibs bool   `json:"health.lua.useOpenLibs"`
}

// override collects one customization key's script and library choice.
type override struct {
	name        string
	healthLua   string
	useOpenLibs bool
}

// ParseSettings reads the health settings out of argocd-cm's data. Errors name
// the key at fault. Lua scripts are not compiled here; a script that does not
// compile makes its kind Unknown when assessed.
func ParseSettings(data map[string]string) (*Settings, error) {
	s := &Settings{ApplicationHealth: true}
	var err error
	if s.ApplicationHealth, err = boolKey(data, KeyApplicationHealth, true); err != nil {
		return nil, err
	}
	if s.GenericConditions, err = boolKey(data, KeyGenericConditions, false); err != nil {
		return nil, err
	}
	overrides := map[string]*override{}
	if err := parseLegacyBlock(data[KeyCustomizations], overrides); err != nil {
		return nil, err
	}
	if err := parseSplitKeys(data, overrides); err != nil {
		return nil, err
	}
	s.openLibs = map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(overrides)) {
		o := overrides[key]
		if o.useOpenLibs {
			s.openLibs[key] = true
		}
		if strings.TrimSpace(o.healthLua) != "" {
			s.overrides.add(key, NewScript("argocd-cm "+o.name, o.healthLua, o.useOpenLibs))
		}
	}
	return s, nil
}

func boolKey(data map[string]string, key string, def bool) (bool, error) {
	value, ok := data[key]
	if !ok || value == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil {
		return def, &SettingsError{Key: key, Err: err}
	}
	return b, nil
}

func parseLegacyBlock(block string, overrides map[string]*override) error {
	if strings.TrimSpace(block) == "" {
		return nil
	}
	var entries map[string]legacyOverride
	if err := yaml.Unmarshal([]byte(block), &entries); err != nil {
		return &SettingsError{Key: KeyCustomizations, Err: err}
	}
	for key, e := range entries {
		overrides[key] = &override{
			name:        fmt.Sprintf("%s[%s]", KeyCustomizations, key),
			healthLua:   e.HealthLua,
			useOpenLibs: e.UseOpenLibs,
		}
	}
	return nil
}

// parseSplitKeys reads resource.customizations.health.<group>_<Kind> and
// resource.customizations.useOpenLibs.<group>_<Kind>, which win over the
// legacy block for the same group and kind.
func parseSplitKeys(data map[string]string, overrides map[string]*override) error {
	for _, cmKey := range slices.Sorted(maps.Keys(data)) {
		var prefix string
		switch {
		case strings.HasPrefix(cmKey, KeyHealthPrefix):
			prefix = KeyHealthPrefix
		case strings.HasPrefix(cmKey, KeyOpenLibsPrefix):
			prefix = KeyOpenLibsPrefix
		default:
			continue
		}
		key, err := overrideKey(strings.TrimPrefix(cmKey, prefix))
		if err != nil {
			return &SettingsError{Key: cmKey, Err: err}
		}
		o := overrides[key]
		if o == nil {
			o = &override{}
			overrides[key] = o
		}
		if prefix == KeyHealthPrefix {
			o.name, o.healthLua = cmKey, data[cmKey]
			continue
		}
		if o.useOpenLibs, err = strconv.ParseBool(data[cmKey]); err != nil {
			return &SettingsError{Key: cmKey, Err: err}
		}
	}
	return nil
}

// overrideKey turns "<group>_<Kind>" or "<Kind>" into Argo CD's key
// "<group>/<Kind>" or "<Kind>"; "all" stands for every kind.
func overrideKey(groupKind string) (string, error) {
	if groupKind == "all" {
		return "*/*", nil
	}
	parts := strings.Split(groupKind, "_")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0] + "/" + parts[1], nil
	case len(parts) == 1 && groupKind != "":
		return groupKind, nil
	}
	return "", fmt.Errorf("group and kind should read <group>_<Kind> or <Kind>, got %q", groupKind)
}
