package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// eachFixture runs check in one subtest per YAML file of dir, on the file
// decoded strictly into a new F. A dir without fixtures fails the test.
func eachFixture[F any](t *testing.T, dir string, check func(t *testing.T, f *F)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := new(F)
			if err := yaml.UnmarshalStrict(b, f); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			check(t, f)
		})
	}
}
