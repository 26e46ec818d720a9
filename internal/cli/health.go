package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	yaml3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/internal/health"
)

func newHealthCommand(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Assess resource health the way the engine does",
		Long: `Assess the health of Kubernetes objects with the engine's checks: Argo CD's
built-in checks, Lua health customizations from argocd-cm, and a library of Lua
checks laid out like Argo CD's resource_customizations directory.`,
	}
	cmd.AddCommand(newHealthEvalCommand(s), newHealthTestCommand(s))
	return cmd
}

// healthSources are the flags every health command shares: where Lua
// customizations come from.
type healthSources struct {
	ArgoCDCM   string
	LibraryDir string
}

func (h *healthSources) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.ArgoCDCM, "argocd-cm", "", "argocd-cm ConfigMap manifest whose resource.customizations keys hold Lua health checks")
}

// newAssessor builds an assessor from opts, naming the argocd-cm file when one
// of its keys is malformed.
func (h *healthSources) newAssessor(opts health.Options) (*health.Assessor, error) {
	a, err := health.New(opts)
	var settingsErr *health.SettingsError
	if errors.As(err, &settingsErr) {
		return nil, fmt.Errorf("%s: %w", h.ArgoCDCM, err)
	}
	return a, err
}

// options reads the argocd-cm file, if any, into assessor options.
func (h *healthSources) options() (health.Options, error) {
	opts := health.Options{LibraryDir: h.LibraryDir}
	if h.ArgoCDCM == "" {
		return opts, nil
	}
	data, err := readConfigMapData(h.ArgoCDCM)
	if err != nil {
		return opts, err
	}
	opts.Settings = data
	return opts, nil
}

// readConfigMapData returns the data of the argocd-cm ConfigMap in the
// manifest file at path: the ConfigMap named argocd-cm, else the file's
// only document. Other documents (argocd-secret, ...) are skipped.
func readConfigMapData(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read argocd-cm: %w", err)
	}
	type configMap struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Data     map[string]string     `json:"data"`
	}
	var docs []configMap
	dec := yaml3.NewDecoder(bytes.NewReader(raw))
	for {
		var node yaml3.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		doc, err := yaml3.Marshal(&node)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var cm configMap
		if err := yaml.Unmarshal(doc, &cm); err != nil {
			return nil, fmt.Errorf("%s: field data: %w", path, err)
		}
		if cm.Kind == "ConfigMap" && cm.Metadata.Name == "argocd-cm" {
			return cm.Data, nil
		}
		docs = append(docs, cm)
	}
	if len(docs) != 1 || docs[0].Kind != "ConfigMap" {
		kind := ""
		if len(docs) == 1 {
			kind = docs[0].Kind
		}
		return nil, fmt.Errorf("%s: field kind: want ConfigMap, got %q", path, kind)
	}
	return docs[0].Data, nil
}

// HealthEval assesses one object read from a file.
type HealthEval struct {
	healthSources
	// File holds the object; "-" reads standard input.
	File string
	// ArgoParity leaves out what wavecd adds to Argo CD.
	ArgoParity bool
	// GenericConditions turns on the generic condition check.
	GenericConditions bool
	// Output is text, json or yaml.
	Output string
}

// healthEvalOutput is the structured output: always both fields.
type healthEvalOutput struct {
	Status  health.Code `json:"status"`
	Message string      `json:"message"`
}

// Run assesses the object and prints the result.
func (e *HealthEval) Run(s Streams) error {
	if err := validateOutput(e.Output, "text", "json", "yaml"); err != nil {
		return err
	}
	opts, err := e.options()
	if err != nil {
		return err
	}
	opts.ArgoParity, opts.GenericConditions = e.ArgoParity, e.GenericConditions
	assessor, err := e.newAssessor(opts)
	if err != nil {
		return err
	}
	obj, err := e.readObject(s.In)
	if err != nil {
		return err
	}
	if gk, ok := inferGroupKind(obj); ok {
		fmt.Fprintf(s.Err, "note: %s has no apiVersion and kind; spec.entrypoint marks it as an Argo %s\n", e.File, gk.Kind)
	}
	result := assessor.Explain(obj)
	if e.Output != "text" {
		return printStructured(s.Out, e.Output, healthEvalOutput{Status: result.Status.Status, Message: result.Status.Message})
	}
	return printHealthText(s.Out, obj, result)
}

func (e *HealthEval) readObject(stdin io.Reader) (*unstructured.Unstructured, error) {
	if e.File == "" {
		return nil, errors.New("no object given: use -f FILE (or -f - for standard input)")
	}
	if e.File != "-" {
		return health.ReadObject(e.File)
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	return health.DecodeObject(data)
}

func printHealthText(w io.Writer, obj *unstructured.Unstructured, r health.Result) error {
	if r.Status.Status == "" {
		gk := obj.GroupVersionKind().GroupKind()
		_, err := fmt.Fprintf(w, "no health check applies to %s\n", gk)
		return err
	}
	_, err := fmt.Fprintf(w, "status:  %s\nmessage: %s\ncheck:   %s\n", r.Status.Status, r.Status.Message, r.Source)
	return err
}

func newHealthEvalCommand(s Streams) *cobra.Command {
	e := &HealthEval{}
	cmd := &cobra.Command{
		Use:   "eval -f OBJECT.yaml",
		Short: "Print the health of one object",
		Long: `Print the health status and message of one Kubernetes object, choosing the
check the way the engine does:

  1. an object being deleted is Progressing ("Pending deletion")
  2. a Lua override from --argocd-cm (resource.customizations.health.<group>_<Kind>,
     then wildcard keys of the resource.customizations block)
  3. a Lua script from --customizations-dir (<group>/<Kind>/health.lua)
  4. a built-in check (Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod, Job,
     Service, Ingress, PersistentVolumeClaim, HorizontalPodAutoscaler, APIService,
     argoproj.io Workflow), and the child Application check unless --argo-parity
  5. the generic condition check, with --generic-conditions

With -o json or -o yaml the output is one object {"status", "message"}, with an
empty status when no check applies. An object with neither apiVersion nor kind
but a spec.entrypoint is taken for an Argo Workflow.`,
		Example: `  wavecd health eval -f deployment.yaml
  wavecd health eval -f rollout.yaml --argocd-cm argocd-cm.yaml -o json
  kubectl get app guestbook -o yaml | wavecd health eval -f - --argo-parity`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return e.Run(s) },
	}
	cmd.Flags().StringVarP(&e.File, "filename", "f", "", "file holding the object (YAML or JSON); - for standard input")
	e.addFlags(cmd)
	cmd.Flags().StringVar(&e.LibraryDir, "customizations-dir", "", "directory of Lua health checks in Argo CD's resource_customizations layout")
	cmd.Flags().BoolVar(&e.ArgoParity, "argo-parity", false, "behave exactly like Argo CD: no child Application health, no generic condition check")
	cmd.Flags().BoolVar(&e.GenericConditions, "generic-conditions", false, "assess custom resources without a check from their Ready or Available condition")
	cmd.Flags().StringVarP(&e.Output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}
