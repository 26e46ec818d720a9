package application

import (
	"strings"
	"unicode/utf8"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// IsApplication reports whether group and kind name an Argo CD Application.
func IsApplication(group, kind string) bool {
	return group == v1alpha1.Group && kind == v1alpha1.ApplicationKind
}

// AnnotationDependsOn lists apps (comma-separated names in the same
// namespace) that must be Synced and Healthy before this app syncs.
const AnnotationDependsOn = "wavecd.io/depends-on"

// DependsOn returns the names app's wavecd.io/depends-on lists.
func DependsOn(app *v1alpha1.Application) []string {
	var out []string
	for _, n := range strings.Split(app.Annotations[AnnotationDependsOn], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Condition returns the app's condition of type typ, nil without one.
func Condition(app *v1alpha1.Application, typ string) *v1alpha1.ApplicationCondition {
	for i := range app.Status.Conditions {
		if app.Status.Conditions[i].Type == typ {
			return &app.Status.Conditions[i]
		}
	}
	return nil
}

// Truncate cuts a message to at most n bytes, on a rune boundary, marking
// the cut: what an Event's note, or a failure quoted in an explanation, may
// hold.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
