package cli

import (
	"strings"
	"testing"
)

// The notification catalog and app fixtures of internal/notify: the
// commands read them as a user's files.
const (
	catalogFile   = "../notify/catalog.yaml"
	stalledApp    = "../notify/testdata/apps/stalled.yaml"
	bootstrapApps = "../notify/testdata/bootstrap/complete.yaml"
)

// TestAdminNotificationsGolden tries templates and triggers from files,
// as `argocd admin notifications` does, and prints without sending.
func TestAdminNotificationsGolden(t *testing.T) {
	files := []string{"--config-map", catalogFile, "--secret", ":empty"}
	for name, args := range map[string][]string{
		"notifications_trigger_run_stalled.txt":   {"trigger", "run", "on-stalled", stalledApp},
		"notifications_trigger_run_bootstrap.txt": {"trigger", "run", "on-bootstrap-complete", bootstrapApps},
		"notifications_trigger_run_failing.txt":   {"trigger", "run", "on-sync-failed", stalledApp},
		"notifications_template_notify.txt":       {"template", "notify", "app-stalled", stalledApp, "--recipient", "slack:ops", "--recipient", "email:ops@example.com"},
		"notifications_template_bootstrap.txt":    {"template", "notify", "app-bootstrap-complete", bootstrapApps},
		"notifications_trigger_get.txt":           {"trigger", "get"},
		"notifications_template_get_names.txt":    {"template", "get", "-o", "name"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := runCLI(t, append(append([]string{"admin", "notifications"}, args...), files...)...)
			if err != nil || errOut != "" {
				t.Fatalf("error %v, stderr %q", err, errOut)
			}
			assertGolden(t, name, out)
		})
	}
}

func TestAdminNotificationsErrors(t *testing.T) {
	files := []string{"--config-map", catalogFile, "--secret", ":empty"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unknown trigger":   {[]string{"trigger", "run", "on-nothing", stalledApp}, `trigger "on-nothing" is not defined in argocd-notifications-cm (defined: on-bootstrap-complete, on-created,`},
		"unknown template":  {[]string{"template", "notify", "nope", stalledApp}, `template "nope" is not defined`},
		"file without app":  {[]string{"trigger", "run", "on-stalled", catalogFile}, "holds no Application"},
		"no such ConfigMap": {[]string{"trigger", "get", "--config-map", stalledApp}, "holds no ConfigMap argocd-notifications-cm"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append(append([]string{"admin", "notifications"}, tc.args...), files...)
			if tc.args[len(tc.args)-2] == "--config-map" {
				args = append([]string{"admin", "notifications"}, append(tc.args, "--secret", ":empty")...)
			}
			_, _, err := runCLI(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
