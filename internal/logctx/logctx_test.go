package logctx

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	if From(context.Background()) != slog.Default() {
		t.Error("a context without a logger does not give slog's default")
	}
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil)).With("app", "web")
	From(With(context.Background(), l)).Info("synced")
	if !strings.Contains(buf.String(), "app=web") || !strings.Contains(buf.String(), "synced") {
		t.Errorf("logged %q, want the caller's logger with its fields", buf.String())
	}
}
