package cli

import (
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/wavecd/wavecd/internal/logctx"
)

// setLoggers points the process-wide loggers at w: slog's default (which
// the controller and the server use), controller-runtime's and klog.
// Their attributes are formatted only for the records logged
// (logctx.Deferred).
func setLoggers(w io.Writer, level slog.Level) {
	h := logctx.Deferred(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(slog.New(h))
	ctrllog.SetLogger(logr.FromSlogHandler(h))
	klog.SetLogger(logr.FromSlogHandler(h))
}

// logLevel is the level of a command's --verbose flag: debug when set.
func logLevel(verbose bool) slog.Level {
	if verbose {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
