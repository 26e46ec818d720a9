package render

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// helmBin is the Helm CLI built from the module's own helm.sh/helm/v4
// version, to compare against.
var helmBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wavecd-helm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	helmBin = filepath.Join(dir, "helm")
	// The tool directive in go.mod pins the CLI to the SDK version we use.
	cmd := exec.Command("go", "build", "-o", helmBin, "helm.sh/helm/v4/cmd/helm")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot build the helm CLI to compare against: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
