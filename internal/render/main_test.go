package render

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// helmBin and jsonnetBin are the Helm and Jsonnet CLIs built from the
// module's own helm.sh/helm/v4 and github.com/google/go-jsonnet versions,
// to compare against.
var helmBin, jsonnetBin string

func TestMain(m *testing.M) {
	if IsJsonnetChild() {
		os.Exit(RunJsonnetChild(os.Stdin, os.Stdout))
	}
	flag.Parse()
	if err := EnableJsonnetChild(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(runTests(m))
}

// fuzzing reports a fuzz run or one of its workers (testenv.Fuzzing,
// which this package cannot import: testenv imports render).
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

func runTests(m *testing.M) int {
	if fuzzing() {
		return m.Run() // the fuzz targets do not compare with the CLIs
	}
	dir, err := os.MkdirTemp("", "wavecd-helm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	helmBin = filepath.Join(dir, "helm")
	jsonnetBin = filepath.Join(dir, "jsonnet")
	// The tool directives in go.mod pin the CLIs to the library versions we use.
	for bin, pkg := range map[string]string{helmBin: "helm.sh/helm/v4/cmd/helm", jsonnetBin: "github.com/google/go-jsonnet/cmd/jsonnet"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: cannot build %s to compare against: %v\n%s", pkg, err, out)
			return 1
		}
	}
	return m.Run()
}
