package health

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// TestFileName is the name of a Lua health test file in Argo CD's layout.
const TestFileName = "health_test.yaml"

// testFile is the format of health_test.yaml. Keys match case-insensitively,
// as with Argo CD's loader.
type testFile struct {
	Tests []struct {
		HealthStatus Status `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// TestResult is the outcome of one test of a health_test.yaml.
type TestResult struct {
	// File is the health_test.yaml the test comes from.
	File string
	// Input is the test's inputPath, relative to File's directory.
	Input string
	Want  Status
	Got   Status
	// Err says why the test could not run (bad file, missing input, no
	// script); Got is then empty.
	Err error
}

// Passed reports whether the test ran and got what it wanted.
func (r TestResult) Passed() bool { return r.Err == nil && r.Got == r.Want }

// RunTests finds every health_test.yaml below dir and runs its tests the way
// Argo CD tests its bundled checks: each input object goes to the Lua script
// the Assessor picks for its group and kind, alone, without the check for
// objects being deleted; an error counts as Unknown with the error as message.
// It fails only when dir cannot be walked or ctx ends.
func (a *Assessor) RunTests(ctx context.Context, dir string) ([]TestResult, error) {
	var results []TestResult
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != TestFileName {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		results = append(results, a.runTestFile(path)...)
		return nil
	})
	if err != nil {
		return results, fmt.Errorf("run health tests in %s: %w", dir, err)
	}
	return results, nil
}

func (a *Assessor) runTestFile(path string) []TestResult {
	data, err := os.ReadFile(path)
	if err != nil {
		return []TestResult{{File: path, Err: err}}
	}
	var tf testFile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		return []TestResult{{File: path, Err: fmt.Errorf("invalid test file: %w", err)}}
	}
	results := make([]TestResult, 0, len(tf.Tests))
	for _, t := range tf.Tests {
		r := TestResult{File: path, Input: t.InputPath, Want: t.HealthStatus}
		r.Got, r.Err = a.runTest(filepath.Join(filepath.Dir(path), t.InputPath))
		results = append(results, r)
	}
	return results
}

func (a *Assessor) runTest(inputPath string) (Status, error) {
	obj, err := ReadObject(inputPath)
	if err != nil {
		return Status{}, err
	}
	gk := obj.GroupVersionKind().GroupKind()
	script := a.LuaScript(gk)
	if script == nil {
		return Status{}, fmt.Errorf("no Lua health check for %s", groupKindKey(gk))
	}
	st, err := script.Check(obj)
	if err != nil {
		return Status{Status: Unknown, Message: err.Error()}, nil //nolint:nilerr // a failing script is an Unknown status, as in Argo CD
	}
	return *st, nil
}

// ReadObject reads one Kubernetes object from a YAML or JSON file.
func ReadObject(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, err := DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// DecodeObject decodes one Kubernetes object from YAML or JSON. Integers
// become int64, as when the object comes from the API server.
func DecodeObject(data []byte) (*unstructured.Unstructured, error) {
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(jsonData, &m); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if m == nil {
		return nil, errors.New("decode object: the document is empty")
	}
	return &unstructured.Unstructured{Object: m}, nil
}
