package workloads

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// launchCase is one fixture of testdata/launch.
type launchCase struct {
	Pod         corev1.Pod                   `json:"pod"`
	Definition  config.Process               `json:"definition"`
	Host        map[string]string            `json:"host"`
	Fixed       map[string]string            `json:"fixed"`
	Allocatable corev1.ResourceList          `json:"allocatable"`
	ConfigMaps  map[string]map[string]string `json:"configMaps"`
	Secrets     map[string]map[string]string `json:"secrets"`
	Want        struct {
		Argv []string          `json:"argv"`
		Env  map[string]string `json:"env"`
	} `json:"want"`
	WantError string `json:"wantError"`
}

// fixtureValues serves a fixture's ConfigMaps and Secrets by
// "namespace/name".
type fixtureValues struct{ configMaps, secrets map[string]map[string]string }

func (f fixtureValues) configMap(_ context.Context, ns, name string) (map[string]string, error) {
	if v, ok := f.configMaps[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f fixtureValues) secret(_ context.Context, ns, name string) (map[string]string, error) {
	if v, ok := f.secrets[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func TestBuildLaunch(t *testing.T) {
	files, err := filepath.Glob("testdata/launch/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tc launchCase
			if err := yaml.UnmarshalStrict(b, &tc); err != nil {
				t.Fatal(err)
			}
			got, err := buildLaunch(t.Context(), &tc.Pod, launchInput{
				def: tc.Definition, host: tc.Host, fixed: tc.Fixed, allocatable: tc.Allocatable,
				values: fixtureValues{configMaps: tc.ConfigMaps, secrets: tc.Secrets},
			})
			if tc.WantError != "" {
				if err == nil || err.Error() != tc.WantError {
					t.Fatalf("error %v, want %q", err, tc.WantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.Want.Argv, got.argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.Want.Env, got.env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
