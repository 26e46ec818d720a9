package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// ParseError is a manifest that does not parse; Line is 1-based within File
// (0 when unknown).
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// document is one YAML document of a file with the line it starts on.
type document struct {
	data []byte
	line int
}

// splitDocuments cuts a YAML stream at "---" lines. The documents share
// data's memory: nothing is copied, so a large input costs its own size
// once, not once per step. A document over maxDoc bytes (0: no limit) is
// a *SizeError naming file and the line it starts on, before anything of
// it is decoded.
func splitDocuments(file string, data []byte, maxDoc int64) ([]document, error) {
	var docs []document
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		end := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			end = pos + i + 1
		}
		trimmed := bytes.TrimRight(data[pos:end], "\r\n")
		if bytes.Equal(trimmed, []byte("---")) || bytes.HasPrefix(trimmed, []byte("--- ")) {
			docs = append(docs, document{data: data[start:pos:pos], line: startLine})
			start, startLine = end, line+1
		}
		if maxDoc > 0 && int64(end-start) > maxDoc {
			return nil, &SizeError{What: fmt.Sprintf("%s:%d: document", file, startLine), Size: int64(end - start), Limit: maxDoc, Setting: KeyMaxManifestSize}
		}
		pos = end
	}
	return append(docs, document{data: data[start:len(data):len(data)], line: startLine}), nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// decodeDocument decodes one YAML (or JSON) document. It returns nil for a
// document that is empty or only comments.
func decodeDocument(file string, doc document) (any, error) {
	if isBlank(doc.data) {
		return nil, nil
	}
	j, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		return nil, yamlError(file, doc.line, err)
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, &ParseError{File: file, Line: doc.line, Err: err}
	}
	return v, nil
}

// yamlError shifts the line a YAML error names to the line in the file.
func yamlError(file string, start int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "error unmarshaling JSON: while decoding JSON: ")
	line := start
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		line = start + n - 1
		msg = strings.TrimSpace(strings.Replace(msg[:m[0]]+msg[m[1]:], "yaml: :", "yaml:", 1))
	}
	return &ParseError{File: file, Line: line, Err: fmt.Errorf("%s", msg)}
}

func isBlank(data []byte) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// toObject checks that v is a Kubernetes object: a map with apiVersion and
// kind.
func toObject(v any) (*unstructured.Unstructured, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a Kubernetes object: a %s, want a mapping", kindOf(v))
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("not a Kubernetes object: apiVersion is missing")
	}
	if u.GetKind() == "" {
		return nil, fmt.Errorf("not a Kubernetes object: kind is missing")
	}
	return u, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// parseManifests parses a YAML stream (or a JSON object or array) into
// objects, strictly: any document that is not an object is an error naming
// the file and line.
func parseManifests(file string, data []byte, maxDoc int64) ([]*unstructured.Unstructured, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		return parseJSONArray(file, t)
	}
	docs, err := splitDocuments(file, data, maxDoc)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(docs))
	for _, doc := range docs {
		v, err := decodeDocument(file, doc)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		u, err := toObject(v)
		if err != nil {
			return nil, &ParseError{File: file, Line: doc.line, Err: err}
		}
		out = append(out, u)
	}
	return out, nil
}

func parseJSONArray(file string, data []byte) ([]*unstructured.Unstructured, error) {
	var items []any
	if err := utiljson.Unmarshal(data, &items); err != nil {
		return nil, &ParseError{File: file, Err: err}
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, it := range items {
		u, err := toObject(it)
		if err != nil {
			return nil, &ParseError{File: file, Err: fmt.Errorf("item %d: %w", i, err)}
		}
		out = append(out, u)
	}
	return out, nil
}

// expandLists replaces each List object (an object whose items is a list,
// such as `kind: List` or `kubectl get -o yaml` output) with its items and
// drops lists whose items are null, as Argo CD does for every source type.
func expandLists(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		items, isList := o.Object["items"]
		switch {
		case !isList:
			out = append(out, o)
		case items == nil && o.Object["spec"] == nil && o.Object["status"] == nil:
		default:
			list, ok := items.([]any)
			if !ok {
				out = append(out, o)
				continue
			}
			for i, it := range list {
				u, err := toObject(it)
				if err != nil {
					return nil, fmt.Errorf("%s %s: items[%d]: %w", o.GetKind(), o.GetName(), i, err)
				}
				out = append(out, u)
			}
		}
	}
	return out, nil
}
