package controller

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/testenv"
)

// Secret values of the app of TestCWE532SecretsNotLogged: in data, in
// stringData, and in data but not valid base64.
const (
	secretDataValue    = "s3cr3t-data-value"
	secretStringValue  = "s3cr3t-string-value"
	secretInvalidValue = "not-base64-s3cr3t!"
)

var credsSecret = `apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  password: ` + base64.StdEncoding.EncodeToString([]byte(secretDataValue)) + `
stringData:
  token: ` + secretStringValue + `
`

var brokenSecret = `apiVersion: v1
kind: Secret
metadata:
  name: broken
data:
  key: ` + secretInvalidValue + `
`

// TestCWE532SecretsNotLogged guards against sensitive information in log
// files (CWE-532): the controller at its most verbose level, and the diff
// the API server runs for the UI, log out-of-sync Secrets without their
// values, whether in data, stringData or not even valid base64.
func TestCWE532SecretsNotLogged(t *testing.T) {
	logs := &testenv.SyncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	h := startController(t, Options{})
	repo := testenv.NewGitRepo(t, map[string]string{"secrets/creds.yaml": credsSecret, "broken/broken.yaml": brokenSecret})
	h.apply(strings.NewReplacer("REPO", repo.Dir, "guestbook", "secrets").Replace(guestbookApp))
	h.apply(strings.NewReplacer("REPO", repo.Dir, "guestbook", "broken").Replace(guestbookApp))
	ctx := context.Background()
	key := client.ObjectKey{Namespace: h.ns, Name: "creds"}
	testenv.Eventually(t, 60*time.Second, "Secret creds created", func() bool { return h.c.Get(ctx, key, &corev1.Secret{}) == nil })

	// Drift: the live Secret's values change, self-heal diffs and logs.
	sec := &corev1.Secret{}
	if err := h.c.Get(ctx, key, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["password"] = []byte("drifted-" + secretDataValue)
	if err := h.c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	testenv.Eventually(t, 30*time.Second, "an out-of-sync line for Secret/creds", func() bool {
		return strings.Contains(logs.String(), "object=Secret/creds diff=")
	})
	// The API server's managed-resources diff, which logs as the
	// controller does.
	diffs, err := compare.NewDiffer(h.env.Config, compare.DifferOptions{CacheDir: t.TempDir()}).Diff(ctx, h.app("broken"))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) == 0 {
		t.Fatal("no diff for the API server's view; the broken Secret should be out of sync")
	}
	testenv.Eventually(t, 30*time.Second, "an out-of-sync line for Secret/broken", func() bool {
		return strings.Contains(logs.String(), "object=Secret/broken diff=")
	})

	text := logs.String()
	for what, v := range map[string]string{
		"data value":                  secretDataValue,
		"data value (base64)":         base64.StdEncoding.EncodeToString([]byte(secretDataValue)),
		"drifted value (base64)":      base64.StdEncoding.EncodeToString([]byte("drifted-" + secretDataValue)),
		"stringData value":            secretStringValue,
		"stringData value (base64)":   base64.StdEncoding.EncodeToString([]byte(secretStringValue)),
		"invalid base64 value":        secretInvalidValue,
		"the values in any diff text": "s3cr3t",
	} {
		if strings.Contains(text, v) {
			t.Errorf("the debug log holds the Secret's %s:\n%s", what, grepLines(text, v))
		}
	}
	for _, d := range diffs {
		if strings.Contains(d.Text, "s3cr3t") {
			t.Errorf("the diff of %s/%s holds a value:\n%s", d.GVK.Kind, d.Name, d.Text)
		}
	}
}

func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
