package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

// policyWebhook is an operator's chart: the webhook's Service and its
// configuration (the operator runs the server).
const policyWebhook = `apiVersion: v1
kind: Service
metadata: {name: policy-webhook}
spec:
  selector: {app: policy-webhook}
  ports: [{port: 443, targetPort: 9443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy-NAMESPACE}
webhooks:
- name: policy.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {service: {name: policy-webhook, namespace: NAMESPACE, path: /validate}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NAMESPACE}}
`

// startPolicyServer runs the webhook's server, Ready 5 s after its
// container starts, as the operator would.
func startPolicyServer(t *testing.T, h *harness) {
	t.Helper()
	labels := map[string]string{"app": "policy-webhook"}
	probe := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(9443), Scheme: corev1.URISchemeHTTPS}},
		InitialDelaySeconds: 5, PeriodSeconds: 1,
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-webhook"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "server", Image: "ghcr.io/example/policy-webhook:1.0", ReadinessProbe: probe,
					Ports: []corev1.ContainerPort{{ContainerPort: 9443}},
				}}},
			},
		},
	}
	if _, err := h.env.Client.AppsV1().Deployments(h.ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.env.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "policy-"+h.ns, metav1.DeleteOptions{})
	})
}

// TestAppOfAppsWaitsForWebhookEndpoints: a child app that installs an
// admission webhook turns Healthy only once the webhook's Service has a
// ready endpoint (on the EndpointSlice's event), so the next wave's app is
// created after it and its objects are admitted on the first try.
func TestAppOfAppsWaitsForWebhookEndpoints(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	startPolicyServer(t, h)
	repo := testenv.NewGitRepo(t, map[string]string{
		"app-a/webhook.yaml": strings.ReplaceAll(policyWebhook, "NAMESPACE", h.ns),
		"app-b/config.yaml":  guestbookConfigMap,
	})
	repo.Commit(map[string]string{"apps/app-a.yaml": child(h, repo, "app-a", "0"), "apps/app-b.yaml": child(h, repo, "app-b", "1")}, "add apps")
	h.apply(strings.ReplaceAll(rootApp, "REPO", repo.Dir))
	h.waitApp("app-a", 60*time.Second, "app-a Progressing on its webhook", func(a *v1alpha1.Application) bool {
		for _, r := range a.Status.Resources {
			if r.Kind == "ValidatingWebhookConfiguration" && r.Health != nil && r.Health.Status == "Progressing" &&
				strings.Contains(r.Health.Message, "calls Service "+h.ns+"/policy-webhook, which has no ready endpoint") {
				return true
			}
		}
		return false
	})
	b := h.waitApp("app-b", 90*time.Second, "app-b Synced and Healthy", syncedHealthy)
	if op := b.Status.OperationState; op == nil || op.Phase != "Succeeded" || op.RetryCount != 0 {
		t.Errorf("app-b's sync: %s; want it succeeded on the first try", describe(b))
	}
	readyAt := podReadyTime(t, h, "app=policy-webhook")
	if created := h.app("app-b").CreationTimestamp.Time; created.Before(readyAt.Truncate(time.Second)) {
		t.Errorf("app-b created at %s, before the webhook's pod was Ready at %s", created, readyAt)
	}
	h.waitApp("root", 60*time.Second, "root Synced and Healthy", syncedHealthy)
}
