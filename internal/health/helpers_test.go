package health

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func newTestAssessor(t testing.TB, opts Options) *Assessor {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readFixture reads testdata/name.
func readFixture(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := ReadObject(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
