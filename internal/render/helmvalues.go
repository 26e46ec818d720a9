package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/source"
)

// helmValues merges a source's values the way Argo CD passes them to
// `helm template`: value files in order, then values (or valuesObject),
// then parameters (--set, then --set-string), then file parameters
// (--set-file).
func helmValues(req *Request, opts *v1alpha1.ApplicationSourceHelm, lc *loadedChart) (map[string]any, error) {
	base := map[string]any{}
	for i, vf := range opts.ValueFiles {
		data, err := readValueFile(req, lc, vf, opts.IgnoreMissingValueFiles)
		if err != nil {
			return nil, fmt.Errorf("field helm.valueFiles[%d]: %w", i, err)
		}
		if data == nil {
			continue
		}
		m, err := loader.LoadValues(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("field helm.valueFiles[%d]: %s: %w", i, vf, err)
		}
		base = loader.MergeMaps(base, m)
	}
	inline, err := inlineValues(opts)
	if err != nil {
		return nil, err
	}
	base = loader.MergeMaps(base, inline)
	if err := applyParameters(base, opts.Parameters); err != nil {
		return nil, err
	}
	for i, p := range opts.FileParameters {
		if err := applyFileParameter(req, lc, base, p); err != nil {
			return nil, fmt.Errorf("field helm.fileParameters[%d]: %w", i, err)
		}
	}
	return base, nil
}

// inlineValues parses valuesObject, or values when valuesObject is unset.
func inlineValues(opts *v1alpha1.ApplicationSourceHelm) (map[string]any, error) {
	if opts.ValuesObject != nil && len(opts.ValuesObject.Raw) > 0 {
		m := map[string]any{}
		if err := yaml.Unmarshal(opts.ValuesObject.Raw, &m); err != nil {
			return nil, fmt.Errorf("field helm.valuesObject: %w", err)
		}
		return m, nil
	}
	if strings.TrimSpace(opts.Values) == "" {
		return map[string]any{}, nil
	}
	m, err := loader.LoadValues(strings.NewReader(opts.Values))
	if err != nil {
		return nil, fmt.Errorf("field helm.values: %w", err)
	}
	return m, nil
}

// applyParameters applies --set and --set-string values. Like Argo CD, a
// later parameter of the same name wins, and commas are escaped unless the
// value is a {list}.
func applyParameters(base map[string]any, params []v1alpha1.HelmParameter) error {
	last := map[string]int{}
	for i, p := range params {
		last[p.Name] = i
	}
	for _, forceString := range []bool{false, true} {
		for i, p := range params {
			if last[p.Name] != i || p.ForceString != forceString {
				continue
			}
			expr := p.Name + "=" + escapeSetValue(p.Value)
			parse := strvals.ParseInto
			if forceString {
				parse = strvals.ParseIntoString
			}
			if err := parse(expr, base); err != nil {
				return fmt.Errorf("field helm.parameters[%d] (%s): %w", i, p.Name, err)
			}
		}
	}
	return nil
}

// escapeSetValue escapes commas so a value stays one value, unless it is a
// {a,b} list.
func escapeSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	var prev rune
	for _, r := range v {
		if r == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

func applyFileParameter(req *Request, lc *loadedChart, base map[string]any, p v1alpha1.HelmFileParameter) error {
	data, err := readValueFile(req, lc, p.Path, false)
	if err != nil {
		return err
	}
	reader := func([]rune) (any, error) { return string(data), nil }
	if err := strvals.ParseIntoFile(p.Name+"="+escapeSetValue(p.Path), base, reader); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	return nil
}

// readValueFile reads a value file: $ref/path from another source, a path
// relative to the chart (absolute paths start at the repository root), or
// a file of a chart from a Helm repository. It returns nil, nil for a
// missing file when ignoreMissing is set.
func readValueFile(req *Request, lc *loadedChart, p string, ignoreMissing bool) ([]byte, error) {
	tree, dir, rel := lc.tree, lc.dir, p
	if ref, rest, ok := refPath(p); ok {
		t, found := req.Refs[ref]
		if !found {
			return nil, fmt.Errorf("%s: no source has ref %q", p, ref)
		}
		tree, dir, rel = t, ".", rest
	}
	if tree == nil {
		return chartValueFile(lc, p, ignoreMissing)
	}
	joined, err := source.Join(dir, rel, source.JoinOptions{AbsoluteFromRoot: true})
	if err != nil {
		return nil, err
	}
	data, err := tree.ReadFile(joined)
	if errors.Is(err, fs.ErrNotExist) && ignoreMissing {
		return nil, nil
	}
	if err != nil {
		return nil, valueFileError(p, err)
	}
	return data, nil
}

func valueFileError(p string, err error) error {
	var pe *source.PathError
	if errors.As(err, &pe) {
		return &source.PathError{Path: p, Reason: pe.Reason}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: file not found", p)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// refPath splits "$ref/path" into ref and path.
func refPath(p string) (ref, rest string, ok bool) {
	if !strings.HasPrefix(p, "$") {
		return "", "", false
	}
	ref, rest, _ = strings.Cut(p[1:], "/")
	return ref, rest, true
}

// chartValueFile reads a value file out of a chart from a Helm repository.
func chartValueFile(lc *loadedChart, p string, ignoreMissing bool) ([]byte, error) {
	joined, err := source.Join(".", p, source.JoinOptions{AbsoluteFromRoot: true})
	if err != nil {
		return nil, err
	}
	if data, ok := chartFile(lc.chart, joined); ok {
		return data, nil
	}
	if ignoreMissing {
		return nil, nil
	}
	return nil, fmt.Errorf("%s: file not found in chart %s", p, lc.chart.Name())
}
