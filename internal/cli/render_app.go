package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/render"
)

// appFile is an Application read from a file, with what is needed to point
// errors at lines of that file.
type appFile struct {
	*v1alpha1.Application
	name string
	root *yaml3.Node
	// Warnings name the fields wavecd ignored or does not implement, with
	// their lines.
	Warnings []string
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): `)

// loadApplication reads one Application manifest. Errors name the file and
// the line.
func loadApplication(file string) (*appFile, error) {
	data, err := readInput(file)
	if err != nil {
		return nil, err
	}
	af := &appFile{name: file, root: &yaml3.Node{}}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, af.yamlError(err)
	}
	if n := countDocuments(data); n != 1 {
		return nil, fmt.Errorf("%s: want one Application, found %d YAML documents", file, n)
	}
	if err := yaml3.Unmarshal(data, af.root); err != nil {
		return nil, af.yamlError(err)
	}
	app := &v1alpha1.Application{}
	strict, err := sigsjson.UnmarshalStrict(j, app, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, af.decodeError(err)
	}
	for _, e := range strict {
		if m := unknownField.FindStringSubmatch(e.Error()); m != nil {
			af.Warnings = append(af.Warnings, af.atPath(m[1], fmt.Sprintf("unknown field %q ignored", m[1])))
		}
	}
	af.Application = app
	if err := af.validate(); err != nil {
		return nil, err
	}
	for _, f := range render.UnsupportedFields(app) {
		field, _, _ := strings.Cut(f, ":")
		af.Warnings = append(af.Warnings, af.atPath(field, f))
	}
	return af, nil
}

// atPath prefixes msg with file:line of a dotted field path whose list
// indexes are written [i].
func (af *appFile) atPath(field, msg string) string {
	dotted := strings.NewReplacer("[", ".", "]", "").Replace(field)
	if line := lineOf(af.root, strings.Split(dotted, ".")); line > 0 {
		return fmt.Sprintf("%s:%d: %s", af.name, line, msg)
	}
	return fmt.Sprintf("%s: %s", af.name, msg)
}

func readInput(file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(os.Stdin)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read application: %w", err)
	}
	return data, nil
}

func countDocuments(data []byte) int {
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var v yaml3.Node
		if err := dec.Decode(&v); err != nil {
			return n
		}
		if len(v.Content) > 0 {
			n++
		}
	}
}

func (af *appFile) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", af.name, m[1], strings.TrimPrefix(msg, m[0]))
	}
	return fmt.Errorf("%s: %s", af.name, msg)
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"$`)

func (af *appFile) decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return af.at(te.Field, fmt.Errorf("field %s: cannot use a %s as %s", te.Field, te.Value, te.Type))
	}
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		return af.atKey(m[1], fmt.Errorf("unknown field %q", m[1]))
	}
	return fmt.Errorf("%s: %w", af.name, err)
}

func (af *appFile) validate() error {
	app := af.Application
	if app.APIVersion != v1alpha1.Group+"/"+v1alpha1.Version || app.Kind != v1alpha1.ApplicationKind {
		return af.at("kind", fmt.Errorf("want kind Application of %s/%s, found %s %s", v1alpha1.Group, v1alpha1.Version, app.Kind, app.APIVersion))
	}
	if app.Name == "" {
		return af.at("metadata", errors.New("metadata.name is required"))
	}
	if len(app.Spec.GetSources()) == 0 {
		return af.at("spec", errors.New("spec.source or spec.sources is required"))
	}
	return nil
}

var sourceFieldRef = regexp.MustCompile(`spec\.source(s\[(\d+)\])?`)

// locate prefixes a render error with the line of the source it names.
func (af *appFile) locate(err error) error {
	m := sourceFieldRef.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s: %w", af.name, err)
	}
	field := "spec.source"
	if m[1] != "" {
		field = "spec.sources." + m[2]
	}
	return af.at(field, err)
}

// at prefixes err with file:line of the dotted field path (numbers index
// lists).
func (af *appFile) at(field string, err error) error {
	if line := lineOf(af.root, strings.Split(field, ".")); line > 0 {
		return fmt.Errorf("%s:%d: %w", af.name, line, err)
	}
	return fmt.Errorf("%s: %w", af.name, err)
}

// atKey prefixes err with the line of the first mapping key named key.
func (af *appFile) atKey(key string, err error) error {
	if line := lineOfKey(af.root, key); line > 0 {
		return fmt.Errorf("%s:%d: %w", af.name, line, err)
	}
	return fmt.Errorf("%s: %w", af.name, err)
}

func lineOf(n *yaml3.Node, path []string) int {
	if n.Kind == yaml3.DocumentNode && len(n.Content) > 0 {
		return lineOf(n.Content[0], path)
	}
	if len(path) == 0 {
		return n.Line
	}
	switch n.Kind {
	case yaml3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == path[0] {
				if len(path) == 1 {
					return n.Content[i].Line
				}
				return lineOf(n.Content[i+1], path[1:])
			}
		}
	case yaml3.SequenceNode:
		if i, err := strconv.Atoi(path[0]); err == nil && i < len(n.Content) {
			return lineOf(n.Content[i], path[1:])
		}
	default: // a scalar, alias or document has no path below it
	}
	return n.Line
}

func lineOfKey(n *yaml3.Node, key string) int {
	if n.Kind == yaml3.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	for _, c := range n.Content {
		if l := lineOfKey(c, key); l > 0 {
			return l
		}
	}
	return 0
}
