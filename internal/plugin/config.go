package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Kind is the kind of a plugin configuration.
const Kind = "ConfigManagementPlugin"

// configMapKey is where a ConfigMap carries a plugin configuration, as in
// Argo CD's sidecar examples.
const configMapKey = "plugin.yaml"

// Config is a ConfigManagementPlugin (argoproj.io/v1alpha1).
type Config struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   Metadata   `json:"metadata"`
	Spec       ConfigSpec `json:"spec"`
}

// Metadata is the part of a plugin's metadata that matters.
type Metadata struct {
	Name string `json:"name"`
}

// ConfigSpec is what a plugin runs.
type ConfigSpec struct {
	Version  string   `json:"version,omitempty"`
	Init     Command  `json:"init,omitempty"`
	Generate Command  `json:"generate"`
	Discover Discover `json:"discover,omitempty"`
	// Parameters are announced to users; they do not change generation.
	Parameters Parameters `json:"parameters,omitempty"`
	// PreserveFileMode keeps the repository's executable bits in the copy
	// the plugin works on (else files are 0644).
	PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	// LockRepo is accepted and ignored (each run has its own copy).
	LockRepo bool `json:"lockRepo,omitempty"`
	// ProvideGitCreds is accepted and ignored (never any credentials).
	ProvideGitCreds bool `json:"provideGitCreds,omitempty"`
}

// Command is a program and its arguments.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Discover says which sources a plugin supports when the app names none.
type Discover struct {
	Find     Find   `json:"find,omitempty"`
	FileName string `json:"fileName,omitempty"`
}

// Find is a glob or a command whose non-empty output means "supported".
type Find struct {
	Command `json:",inline"`
	Glob    string `json:"glob,omitempty"`
}

// Parameters are static announcements and a command printing more.
type Parameters struct {
	Static  []Announcement `json:"static,omitempty"`
	Dynamic Command        `json:"dynamic,omitempty"`
}

// Announcement describes one parameter a plugin takes.
type Announcement struct {
	Name           string            `json:"name,omitempty"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         string            `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// Name is the name apps use for the plugin: `<metadata.name>-<version>`,
// or the name alone without a version.
func (c *Config) Name() string {
	if c.Spec.Version != "" {
		return c.Metadata.Name + "-" + c.Spec.Version
	}
	return c.Metadata.Name
}

// HasDiscovery reports whether the plugin has discovery rules.
func (c *Config) HasDiscovery() bool {
	d := c.Spec.Discover
	return d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command.Command) > 0
}

func (c *Config) validate() error {
	switch {
	case c.Kind != Kind:
		return fmt.Errorf("kind should be %s, found %q", Kind, c.Kind)
	case c.Metadata.Name == "":
		return errors.New("metadata.name should be non-empty")
	case len(c.Spec.Generate.Command) == 0:
		return errors.New("spec.generate.command should be non-empty")
	}
	return nil
}

// Parse reads plugin configurations from a YAML stream: ConfigManagement
// Plugin documents, or ConfigMaps with one under the plugin.yaml key.
// Other documents are skipped.
func Parse(file string, data []byte) ([]*Config, error) {
	var out []*Config
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		var node yaml3.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		doc, err := yaml3.Marshal(&node)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		cfg, err := parseDocument(doc)
		if err != nil {
			line := node.Line
			if len(node.Content) > 0 {
				line = node.Content[0].Line
			}
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if cfg != nil {
			out = append(out, cfg)
		}
	}
}

func parseDocument(doc []byte) (*Config, error) {
	var head struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	switch {
	case head.Kind == "ConfigMap" && head.Data[configMapKey] != "":
		doc = []byte(head.Data[configMapKey])
	case head.Kind != Kind:
		return nil, nil
	}
	cfg := &Config{}
	if err := yaml.UnmarshalStrict(doc, cfg); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: json: ")
		return nil, fmt.Errorf("invalid plugin configuration: %s", msg)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("invalid plugin configuration: %w", err)
	}
	return cfg, nil
}

// socketSuffix ends the name of a sidecar's socket: `<plugin name>.sock`.
const socketSuffix = ".sock"

// folder is what a plugins folder holds.
type folder struct {
	configs []*Config
	// sockets maps a plugin name to its sidecar's socket path.
	sockets map[string]string
}

// readFolder reads the plugin files (*.yaml, *.yml) and sidecar sockets
// of dir. A name given twice is an error naming both places. A folder that
// does not exist holds no plugin, as in Argo CD: an install whose
// controller always names the sidecars' folder works without any.
func readFolder(dir string) (*folder, error) {
	f := &folder{sockets: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugins folder: %w", err)
	}
	where := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSocket != 0 && strings.HasSuffix(e.Name(), socketSuffix):
			name := strings.TrimSuffix(e.Name(), socketSuffix)
			if err := claim(where, name, p); err != nil {
				return nil, err
			}
			f.sockets[name] = p
		case e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")):
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("plugins folder: %w", err)
			}
			cfgs, err := Parse(p, data)
			if err != nil {
				return nil, err
			}
			for _, c := range cfgs {
				if err := claim(where, c.Name(), p); err != nil {
					return nil, err
				}
			}
			f.configs = append(f.configs, cfgs...)
		}
	}
	slices.SortFunc(f.configs, func(a, b *Config) int { return strings.Compare(a.Name(), b.Name()) })
	return f, nil
}

func claim(where map[string]string, name, p string) error {
	if other, dup := where[name]; dup {
		return fmt.Errorf("plugins folder: plugin %q is defined twice: %s and %s", name, other, p)
	}
	where[name] = p
	return nil
}
