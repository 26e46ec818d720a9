package server_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/testenv"
)

// Values of the Secrets of TestCWE200SecretsMaskedEverywhere, each in one
// place a Secret's value can hide.
var secretValues = map[string]string{
	"data in Git":           "s3cr3t-git-data",
	"stringData in Git":     "s3cr3t-git-string",
	"invalid base64 in Git": "not-base64-s3cr3t!",
	"data live":             "s3cr3t-live-data",
	"last-applied live":     "s3cr3t-last-applied",
}

// TestCWE200SecretsMaskedEverywhere guards against exposure of sensitive
// information (CWE-200) as Argo CD's CVEs about Secrets in diffs and
// manifests would have been found: with the real differ, an out-of-sync
// Secret (data, stringData, a value that is not base64, a last-applied
// annotation holding the plain text) shows no value in managed resources,
// diffs, the resource tree, the app, its events or the server's log.
func TestCWE200SecretsMaskedEverywhere(t *testing.T) {
	env := testenv.Get(t)
	h := newAPIHarness(t, harnessOptions{differ: compare.NewDiffer(env.Config, compare.DifferOptions{CacheDir: t.TempDir()})})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	repo := testenv.NewGitRepo(t, map[string]string{
		"secrets/creds.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: " + b64(secretValues["data in Git"]) +
			"\nstringData:\n  token: " + secretValues["stringData in Git"] + "\n",
		"secrets/broken.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\ndata:\n  key: " + secretValues["invalid base64 in Git"] + "\n",
	})
	h.apply(`apiVersion: v1
kind: Secret
metadata:
  name: creds
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","stringData":{"password":"` + secretValues["last-applied live"] + `"}}'
    argocd.argoproj.io/tracking-id: secrets:/Secret:NAMESPACE/creds
data:
  password: ` + b64(secretValues["data live"]) + `
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: secrets
spec:
  project: default
  source: {repoURL: ` + repo.Dir + `, path: secrets, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
status:
  sync: {status: OutOfSync}
  resources:
  - {version: v1, kind: Secret, namespace: NAMESPACE, name: creds, status: OutOfSync}
  - {version: v1, kind: Secret, namespace: NAMESPACE, name: broken, status: OutOfSync}
`)
	admin := h.admin()
	var bodies []string
	for _, path := range []string{"managed-resources", "resource-tree", "events", "", "manifests"} {
		r := h.do("GET", strings.TrimSuffix("/api/v1/applications/secrets/"+path, "/"), admin, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		bodies = append(bodies, r.body)
	}
	if !strings.Contains(bodies[0], `"diff":`) || !strings.Contains(bodies[0], "++++++++") {
		t.Fatalf("managed-resources has no masked diff; is the differ running?\n%s", bodies[0])
	}
	all := strings.Join(bodies, "\n") + logs.String()
	for what, v := range secretValues {
		for _, form := range []string{v, b64(v)} {
			if strings.Contains(all, form) {
				t.Errorf("a response or the log holds the %s value (%q)", what, form)
			}
		}
	}
}
