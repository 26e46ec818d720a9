package hydrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Files of the hydrated branch, as Argo CD names them.
const (
	manifestFile   = "manifest.yaml"
	metadataFile   = "hydrator.metadata"
	readmeFile     = "README.md"
	attributesFile = ".gitattributes"
	// notesRef holds, per hydrated commit, the dry commit it came from.
	notesRef = "refs/notes/hydrator.metadata"
)

// gitAttributes mark the generated files for code hosts.
const gitAttributes = "**/README.md linguist-generated=true\n**/hydrator.metadata linguist-generated=true"

// metadata is hydrator.metadata: at the branch's root, the dry commit;
// in an app's path, the dry source it was rendered from.
type metadata struct {
	RepoURL  string   `json:"repoURL,omitempty"`
	DrySHA   string   `json:"drySha,omitempty"`
	Commands []string `json:"commands,omitempty"`
	Author   string   `json:"author,omitempty"`
	Date     string   `json:"date,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	Body     string   `json:"body,omitempty"`
}

// encode is the file: indented JSON, HTML left as it is, a final newline.
func (m metadata) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// templateData is what the commit message template reads, as
// .metadata.drySha, .metadata.subject and so on.
func (m metadata) templateData() (map[string]any, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	return map[string]any{"metadata": tree}, nil
}

// splitMessage cuts a commit message into its subject (up to the first
// blank line) and body.
func splitMessage(msg string) (subject, body string) {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	subject, body, _ = strings.Cut(strings.TrimSpace(msg), "\n\n")
	return strings.TrimSpace(subject), strings.TrimSpace(body)
}

// manifestYAML writes objects in the order they were rendered, one YAML
// document each with sorted keys and two-space indents, separated by
// "---" lines.
func manifestYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var out bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			out.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&out)
		enc.SetIndent(2)
		if err := enc.Encode(o.Object); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// Default templates: the commit's subject names the dry commit; the
// README tells how the manifests were made.
const (
	defaultCommitTemplate = `{{ trunc 7 .metadata.drySha }}: {{ .metadata.subject }}
{{- if .metadata.body }}

{{ .metadata.body }}
{{- end }}
{{- if .metadata.author }}

Co-authored-by: {{ .metadata.author }}
{{- end }}
`
	defaultReadmeTemplate = `# Manifest Hydration

The manifests in this folder were rendered from {{ .RepoURL }} at
commit {{ .DrySHA }}. To see where they came from:

` + "```shell" + `
git clone {{ .RepoURL }}
# cd into the cloned directory
git checkout {{ .DrySHA }}
{{ range .Commands }}{{ . }}
{{ end }}` + "```\n"
)

// readmeData is what the README template reads.
type readmeData struct {
	RepoURL, DrySHA string
	Commands        []string
}

// funcs are Sprig's, without those that read the environment or the
// network.
func funcs() template.FuncMap {
	m := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(m, name)
	}
	return m
}

// execute runs a template of argocd-cm (key names it in errors), or def
// when it is empty.
func execute(key, text, def string, data any) ([]byte, error) {
	if strings.TrimSpace(text) == "" {
		text = def
	}
	t, err := template.New(key).Funcs(funcs()).Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", key, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("argocd-cm %s: %w", key, err)
	}
	return buf.Bytes(), nil
}
