package logctx

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"testing"
)

// TestDeferred: a logger over Deferred writes what one over the handler
// itself writes, attributes, groups and levels alike.
func TestDeferred(t *testing.T) {
	for name, log := range map[string]func(l *slog.Logger){
		"attributes of With": func(l *slog.Logger) { l.With("app", "web").With("id", 7).Info("synced", "took", "1s") },
		"a group":            func(l *slog.Logger) { l.With("app", "web").WithGroup("sync").With("wave", 2).Info("done", "ok", true) },
		"an empty group":     func(l *slog.Logger) { l.WithGroup("").With("app", "web").Info("synced") },
		"below the level":    func(l *slog.Logger) { l.With("app", "web").Debug("hidden") },
		"no attributes":      func(l *slog.Logger) { l.With().Warn("plain") },
		"two loggers, a base": func(l *slog.Logger) {
			b := l.With("app", "web")
			b.With("n", 1).Info("one")
			b.With("n", 2).Info("two")
		},
	} {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			log(slog.New(slog.NewTextHandler(&want, nil)))
			log(slog.New(Deferred(slog.NewTextHandler(&got, nil))))
			if stamp := regexp.MustCompile(`time=\S+ `); stamp.ReplaceAllString(got.String(), "") != stamp.ReplaceAllString(want.String(), "") {
				t.Errorf("deferred wrote\n%s\nthe handler itself\n%s", got.String(), want.String())
			}
		})
	}
}

// TestDeferredFormatsWhenLogged: attributes reach the inner handler only
// when a record is logged.
func TestDeferredFormatsWhenLogged(t *testing.T) {
	inner := &countingHandler{Handler: slog.NewTextHandler(&bytes.Buffer{}, nil)}
	l := slog.New(Deferred(inner))
	for range 100 {
		l = l.With("app", "web")
	}
	if inner.withAttrs != 0 {
		t.Fatalf("the inner handler formatted attributes %d times before anything was logged", inner.withAttrs)
	}
	l.Info("synced")
	if inner.withAttrs != 1 {
		t.Errorf("one record logged: the inner handler took attributes %d times, want once", inner.withAttrs)
	}
	if d := Deferred(inner); Deferred(d) != d {
		t.Error("a deferred handler wrapped again is wrapped twice")
	}
}

type countingHandler struct {
	slog.Handler
	withAttrs int
}

func (c *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c.withAttrs++
	return c.Handler.WithAttrs(as)
}

func (c *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	return c.Handler.Handle(ctx, r)
}
