package v1alpha1

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ApplicationSourcePlugin renders a source with a Config Management Plugin:
// the one named Name (`<metadata.name>-<spec.version>`, or the name alone
// for a plugin without a version), or the first whose discovery rules
// match the source when Name is empty.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourcePlugin struct {
	Name string `json:"name,omitempty"`
	// Env is handed to the plugin as ARGOCD_ENV_<name> variables.
	Env `json:"env,omitempty"`
	// Parameters are handed to the plugin as PARAM_<NAME> variables and as
	// the JSON of ARGOCD_APP_PARAMETERS.
	Parameters ApplicationSourcePluginParameters `json:"parameters,omitempty"`
}

// EnvEntry is one environment variable of a plugin.
// +kubebuilder:pruning:PreserveUnknownFields
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// IsZero reports an entry without name and value.
func (e *EnvEntry) IsZero() bool { return e == nil || e.Name == "" && e.Value == "" }

// Env is a list of environment variables.
type Env []*EnvEntry

// Environ returns the entries as name=value strings.
func (e Env) Environ() []string {
	var out []string
	for _, item := range e {
		if !item.IsZero() {
			out = append(out, item.Name+"="+item.Value)
		}
	}
	return out
}

// Envsubst expands $NAME and ${NAME} in s with the entries' values (an
// unknown name expands to ""); $$ is a literal $.
func (e Env) Envsubst(s string) string {
	vals := map[string]string{}
	for _, item := range e {
		if item != nil {
			vals[item.Name] = item.Value
		}
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return vals[name]
	})
}

// ApplicationSourcePluginParameter is one plugin parameter: a string, a
// map or an array.
// +kubebuilder:pruning:PreserveUnknownFields
type ApplicationSourcePluginParameter struct {
	Name string `json:"name,omitempty"`
	// String_ is the value of a string parameter.
	String_ *string `json:"string,omitempty"` //nolint:revive // Argo CD's name
	// OptionalMap holds the value of a map parameter.
	*OptionalMap `json:",omitempty"`
	// OptionalArray holds the value of an array parameter.
	*OptionalArray `json:",omitempty"`
}

// OptionalMap is the value of a map parameter; a nil *OptionalMap means
// the parameter is not a map.
type OptionalMap struct {
	// +optional
	Map map[string]string `json:"map"`
}

// OptionalArray is the value of an array parameter.
type OptionalArray struct {
	// +optional
	Array []string `json:"array"`
}

// MarshalJSON writes an empty map or array as {} or [], not null.
func (p ApplicationSourcePluginParameter) MarshalJSON() ([]byte, error) {
	out := map[string]any{"name": p.Name}
	if p.String_ != nil {
		out["string"] = *p.String_
	}
	if p.OptionalMap != nil {
		m := p.Map
		if m == nil {
			m = map[string]string{}
		}
		out["map"] = m
	}
	if p.OptionalArray != nil {
		a := p.Array
		if a == nil {
			a = []string{}
		}
		out["array"] = a
	}
	return json.Marshal(out)
}

// ApplicationSourcePluginParameters are a plugin's parameters.
type ApplicationSourcePluginParameters []ApplicationSourcePluginParameter

var paramNameInvalid = regexp.MustCompile(`[^A-Z0-9_]`)

// paramEnvName is Argo CD's PARAM_ name of a parameter (or map key):
// upper case, every character other than A-Z, 0-9 and _ replaced by _.
func paramEnvName(name string) string {
	return paramNameInvalid.ReplaceAllString(strings.ToUpper(name), "_")
}

// Environ returns the parameters as Argo CD hands them to a plugin:
// ARGOCD_APP_PARAMETERS with all of them as JSON, then PARAM_<NAME> for a
// string, PARAM_<NAME>_<KEY> for each map entry and PARAM_<NAME>_<i> for
// each array item.
func (p ApplicationSourcePluginParameters) Environ() ([]string, error) {
	j, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode plugin parameters: %w", err)
	}
	env := []string{"ARGOCD_APP_PARAMETERS=" + string(j)}
	for _, param := range p {
		base := "PARAM_" + paramEnvName(param.Name)
		if param.String_ != nil {
			env = append(env, base+"="+*param.String_)
		}
		if param.OptionalMap != nil {
			for k, v := range param.Map {
				env = append(env, base+"_"+paramEnvName(k)+"="+v)
			}
		}
		if param.OptionalArray != nil {
			for i, v := range param.Array {
				env = append(env, fmt.Sprintf("%s_%d=%s", base, i, v))
			}
		}
	}
	return env, nil
}
