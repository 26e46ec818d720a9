package controller

import (
	"context"
	"log/slog"
	"strings"
)

type loggerKey struct{}

func withLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func joinLines(lines []string) string { return strings.Join(lines, "; ") }

// trackingOwner returns the app of this installation named by an object's
// tracking annotation (the part before the first colon) or, failing that,
// its instance label.
func (r *Reconciler) trackingOwner(annotations, labels map[string]string) string {
	if annotations["argocd.argoproj.io/installation-id"] != r.installationID() {
		return ""
	}
	if id := annotations["argocd.argoproj.io/tracking-id"]; id != "" {
		app, _, _ := strings.Cut(id, ":")
		return app
	}
	return labels["app.kubernetes.io/instance"]
}

// installationID is the installation ID in force (argocd-cm's, or the
// option's when set).
func (r *Reconciler) installationID() string {
	if r.opts.InstallationID != "" {
		return r.opts.InstallationID
	}
	r.settings.mu.Lock()
	defer r.settings.mu.Unlock()
	if r.settings.settings != nil {
		return r.settings.settings.InstallationID
	}
	return ""
}
