// Package logctx carries the logger of a piece of work (one reconcile of an
// Application or an ApplicationSet, one sync) in its context, so code deep
// in the call logs with the fields its caller added (app, set). There is no
// global logger beyond slog's default, which From returns when the context
// carries none. Deferred keeps the fields loggers add unformatted until
// a record is logged.
package logctx

import (
	"context"
	"log/slog"
)

type key struct{}

// With returns ctx carrying l.
func With(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// From returns the logger ctx carries, slog's default without one.
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
