package logctx

import (
	"context"
	"log/slog"
)

// Deferred wraps h so that the attributes loggers add (slog's With,
// logr's WithValues) are formatted when a record is logged, not when they
// are added. A text or JSON handler formats them at once, for every
// logger made: controller-runtime makes one per reconcile, with the app
// and a reconcile ID, and an idle reconcile logs nothing.
func Deferred(h slog.Handler) slog.Handler {
	if d, ok := h.(*deferred); ok {
		return d
	}
	return &deferred{inner: h}
}

// deferred holds the attributes added since its inner handler's last
// group; they go to the inner handler when a record is logged or a group
// is opened.
type deferred struct {
	inner slog.Handler
	attrs []slog.Attr
}

func (d *deferred) Enabled(ctx context.Context, l slog.Level) bool { return d.inner.Enabled(ctx, l) }

func (d *deferred) Handle(ctx context.Context, r slog.Record) error {
	return d.applied().Handle(ctx, r)
}

func (d *deferred) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return d
	}
	// The three-index slice makes append copy: loggers made from d share
	// its attributes and must not write into each other's.
	return &deferred{inner: d.inner, attrs: append(d.attrs[:len(d.attrs):len(d.attrs)], attrs...)}
}

func (d *deferred) WithGroup(name string) slog.Handler {
	if name == "" {
		return d
	}
	return &deferred{inner: d.applied().WithGroup(name)}
}

// applied is the inner handler with the held attributes added.
func (d *deferred) applied() slog.Handler {
	if len(d.attrs) == 0 {
		return d.inner
	}
	return d.inner.WithAttrs(d.attrs)
}
