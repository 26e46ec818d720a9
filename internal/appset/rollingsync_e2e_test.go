package appset

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// slowDeployment becomes Healthy about 6 s after it is applied: its pod
// turns ready after a KWOK delay.
func slowDeployment(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata:
      labels: {app: %[1]s}
      annotations: {pod-ready.stage.kwok.x-k8s.io/delay: "6s"}
    spec:
      containers: [{name: app, image: nginx:1.27}]
`, name)
}

const rollingSet = `
metadata: {name: rollout}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {name: dev, env: env-dev}
      - {name: prod-a, env: env-prod}
      - {name: prod-b, env: env-prod}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions:
        - {key: envLabel, operator: In, values: [env-dev]}
      - matchExpressions:
        - {key: envLabel, operator: In, values: [env-prod]}
        maxUpdate: 100%
  template:
    metadata:
      name: '{{.name}}'
      labels: {envLabel: '{{.env}}'}
    spec:
      project: default
      source: {repoURL: REPO, targetRevision: main, path: '{{.name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: NAMESPACE}
      syncPolicy:
        automated: {prune: true}
`

// TestRollingSync: with RollingSync the generated apps have automated sync
// turned off, the first step's app is synced first, and the second step's
// apps get their sync operation only once the first step's app is Healthy
// and its sync finished, as the apps' own status timestamps show.
func TestRollingSync(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{apps: true})
	repo := testenv.NewGitRepo(t, map[string]string{
		"dev/deploy.yaml": slowDeployment("dev"), "prod-a/cm.yaml": configMap("prod-a"), "prod-b/cm.yaml": configMap("prod-b"),
	})
	h.createSet(rollingSet, repo.Dir)
	names := []string{"dev", "prod-a", "prod-b"}
	h.eventually(3*time.Minute, "every app Synced and Healthy after its rollout sync", func() bool {
		for _, n := range names {
			app := h.app(n)
			if app == nil || !rolloutHealthy(app) || app.Status.OperationState == nil || app.Status.OperationState.FinishedAt == nil {
				return false
			}
		}
		return true
	}, func() string { return h.describeApps(names) })

	dev := h.app("dev")
	devOp := dev.Status.OperationState
	devHealthy := dev.Status.Health.LastTransitionTime
	if devHealthy == nil {
		t.Fatal("dev has no health transition time")
	}
	for _, n := range names {
		app := h.app(n)
		if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil {
			t.Errorf("%s: automated sync left on: %+v", n, app.Spec.SyncPolicy.Automated)
		}
		op := app.Status.OperationState
		if op.Operation.InitiatedBy.Username != "applicationset-controller" || op.Operation.Sync == nil || !op.Operation.Sync.Prune {
			t.Errorf("%s: last operation %+v was not the rollout's sync (with the template's prune)", n, op.Operation)
		}
		if n == "dev" {
			continue
		}
		if op.StartedAt.Before(devHealthy) || op.StartedAt.Before(devOp.FinishedAt) {
			t.Errorf("%s: sync started at %s, before dev turned Healthy (%s) or finished its sync (%s)",
				n, op.StartedAt.UTC(), devHealthy.UTC(), devOp.FinishedAt.UTC())
		}
	}
	// dev's pod is ready 6 s after dev's sync starts, so a rollout that did
	// not wait would have started the prod syncs well before.
	if d := devHealthy.Sub(devOp.StartedAt.Time); d < 4*time.Second {
		t.Errorf("dev turned Healthy %s after its sync started; the slow pod should take about 6s", d)
	}

	h.eventually(30*time.Second, "every rollout status Healthy and the rollout complete", func() bool {
		set := h.set("rollout")
		c := condition(set, v1alpha1.ApplicationSetConditionRolloutProgressing)
		if c == nil || c.Status != "False" || len(set.Status.ApplicationStatus) != 3 {
			return false
		}
		for _, st := range set.Status.ApplicationStatus {
			wantStep := "2"
			if st.Application == "dev" {
				wantStep = "1"
			}
			if st.Status != v1alpha1.ProgressiveSyncHealthy || st.Step != wantStep {
				return false
			}
		}
		return true
	}, func() string {
		set := h.set("rollout")
		return fmt.Sprintf("%+v; %s", set.Status.ApplicationStatus, describeConditions(set))
	})
}

func (h *harness) describeApps(names []string) string {
	var parts []string
	for _, n := range names {
		app := h.app(n)
		if app == nil {
			parts = append(parts, n+": missing")
			continue
		}
		s := fmt.Sprintf("%s: sync=%s health=%s", n, app.Status.Sync.Status, app.Status.Health.Status)
		if op := app.Status.OperationState; op != nil {
			s += fmt.Sprintf(" op=%s", op.Phase)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
