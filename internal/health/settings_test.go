package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const legacyBlock = `
"*.aws.crossplane.io/*":
  health.lua: |
    return { status = "Healthy", message = "aws wildcard" }
  ignoreDifferences: |
    jsonPointers: [/status]
"*.crossplane.io/*":
  health.lua: |
    return { status = "Progressing", message = "crossplane wildcard" }
cert-manager.io/Certificate:
  health.lua.useOpenLibs: true
  health.lua: |
    return { status = "Degraded", message = "legacy certificate" }
ConfigMap:
  health.lua: |
    return { status = "Healthy", message = "core kind" }
`

func TestSettingsScriptLookup(t *testing.T) {
	data := map[string]string{
		KeyCustomizations:                            legacyBlock,
		KeyHealthPrefix + "cert-manager.io_Issuer":   `return { status = "Healthy", message = "split key" }`,
		KeyHealthPrefix + "Secret":                   `return { status = "Healthy", message = "core split key" }`,
		KeyOpenLibsPrefix + "cert-manager.io_Issuer": "true",
		KeyHealthPrefix + "all":                      `return { status = "Unknown", message = "every kind" }`,
	}
	tests := map[string]struct {
		gk       schema.GroupKind
		wantName string
		wantOpen bool
	}{
		"split key":                  {schema.GroupKind{Group: "cert-manager.io", Kind: "Issuer"}, "argocd-cm resource.customizations.health.cert-manager.io_Issuer", true},
		"split key for a core kind":  {schema.GroupKind{Kind: "Secret"}, "argocd-cm resource.customizations.health.Secret", false},
		"legacy block entry":         {schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}, "argocd-cm resource.customizations[cert-manager.io/Certificate]", true},
		"legacy block core kind":     {schema.GroupKind{Kind: "ConfigMap"}, "argocd-cm resource.customizations[ConfigMap]", false},
		"most specific wildcard":     {schema.GroupKind{Group: "s3.aws.crossplane.io", Kind: "Bucket"}, "argocd-cm resource.customizations[*.aws.crossplane.io/*]", false},
		"less specific wildcard":     {schema.GroupKind{Group: "sql.gcp.crossplane.io", Kind: "Database"}, "argocd-cm resource.customizations[*.crossplane.io/*]", false},
		"all stands for every group": {schema.GroupKind{Group: "apps", Kind: "Deployment"}, "argocd-cm resource.customizations.health.all", false},
	}
	s, err := ParseSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			script := s.overrides.lookup(tc.gk)
			if script == nil {
				t.Fatalf("no script for %v", tc.gk)
			}
			got := []any{script.Name, script.OpenLibs}
			if diff := cmp.Diff([]any{tc.wantName, tc.wantOpen}, got); diff != "" {
				t.Errorf("script mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettingsSplitKeyWinsOverLegacyBlock(t *testing.T) {
	s, err := ParseSettings(map[string]string{
		KeyCustomizations: legacyBlock,
		KeyHealthPrefix + "cert-manager.io_Certificate": `return { status = "Healthy" }`,
	})
	if err != nil {
		t.Fatal(err)
	}
	script := s.overrides.lookup(schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"})
	got := []any{script.Name, script.OpenLibs, script.source}
	want := []any{"argocd-cm resource.customizations.health.cert-manager.io_Certificate", true, `return { status = "Healthy" }`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("script mismatch (-want +got):\n%s", diff)
	}
}

func TestParseSettingsFlags(t *testing.T) {
	tests := map[string]struct {
		data map[string]string
		want []bool // ApplicationHealth, GenericConditions
	}{
		"defaults":                   {nil, []bool{true, false}},
		"application health off":     {map[string]string{KeyApplicationHealth: "false"}, []bool{false, false}},
		"generic conditions on":      {map[string]string{KeyGenericConditions: "true"}, []bool{true, true}},
		"empty values keep defaults": {map[string]string{KeyApplicationHealth: "", KeyGenericConditions: ""}, []bool{true, false}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSettings(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, []bool{s.ApplicationHealth, s.GenericConditions}); diff != "" {
				t.Errorf("flags mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSettingsErrors(t *testing.T) {
	tests := map[string]struct {
		data map[string]string
		want string
	}{
		"bad legacy block": {
			data: map[string]string{KeyCustomizations: "apps/Deployment: [unclosed"},
			want: "argocd-cm key resource.customizations: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
		},
		"bad useOpenLibs value": {
			data: map[string]string{KeyOpenLibsPrefix + "apps_Deployment": "yes please"},
			want: `argocd-cm key resource.customizations.useOpenLibs.apps_Deployment: strconv.ParseBool: parsing "yes please": invalid syntax`,
		},
		"too many underscores": {
			data: map[string]string{KeyHealthPrefix + "apps_v1_Deployment": "return {}"},
			want: `argocd-cm key resource.customizations.health.apps_v1_Deployment: group and kind should read <group>_<Kind> or <Kind>, got "apps_v1_Deployment"`,
		},
		"empty kind": {
			data: map[string]string{KeyHealthPrefix + "apps_": "return {}"},
			want: `argocd-cm key resource.customizations.health.apps_: group and kind should read <group>_<Kind> or <Kind>, got "apps_"`,
		},
		"bad generic conditions value": {
			data: map[string]string{KeyGenericConditions: "on"},
			want: `argocd-cm key wavecd.health.genericConditions: strconv.ParseBool: parsing "on": invalid syntax`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSettings(tc.data)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
