package testenv

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// LocalClusterBinary is $WAVECD_LOCALCLUSTER, or bin/wavecd-localcluster
// built from this tree; a build that fails fails the test.
func LocalClusterBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("WAVECD_LOCALCLUSTER"); bin != "" {
		return bin
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := BuildLocalCluster(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// SilenceClientLogs turns off client-go's and controller-runtime's own
// logs, which a rehearsal's timeline says better.
func SilenceClientLogs() {
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
}

// RouteLogsToFile makes the default logger write to w (a rehearsal's
// controller log) and to path, appended to, which a failing test prints.
func RouteLogsToFile(t testing.TB, w io.Writer, path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fmt.Fprintf(f, "--- %s\n", time.Now().Format(time.RFC3339))
	slog.SetDefault(slog.New(slog.NewTextHandler(io.MultiWriter(w, f), nil)))
}
