package health

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinChecks(t *testing.T) {
	tests := map[string]struct {
		fixture string
		want    Status
	}{
		"deployment: rolled out":                   {"deployment-healthy", Status{Healthy, ""}},
		"deployment: paused":                       {"deployment-paused", Status{Suspended, "Deployment is paused"}},
		"deployment: observedGeneration behind":    {"deployment-generation-behind", Status{Progressing, "Waiting for rollout to finish: observed deployment generation less than desired generation"}},
		"deployment: progress deadline exceeded":   {"deployment-progress-deadline", Status{Degraded, `Deployment "web" exceeded its progress deadline`}},
		"deployment: new replicas being updated":   {"deployment-updating", Status{Progressing, "Waiting for rollout to finish: 1 out of 3 new replicas have been updated..."}},
		"deployment: old replicas terminating":     {"deployment-old-replicas", Status{Progressing, "Waiting for rollout to finish: 2 old replicas are pending termination..."}},
		"deployment: updated replicas unavailable": {"deployment-unavailable", Status{Progressing, "Waiting for rollout to finish: 1 of 3 updated replicas are available..."}},
		"deployment: unsupported version":          {"deployment-v1beta2", Status{Unknown, "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment"}},
		"deployment: field of the wrong type":      {"deployment-bad-field", Status{Unknown, "failed to convert unstructured Deployment to typed: .spec.replicas: expected an integer, got string"}},

		"statefulset: spec not observed":          {"statefulset-not-observed", Status{Progressing, "Waiting for statefulset spec update to be observed..."}},
		"statefulset: pods not ready":             {"statefulset-pods-not-ready", Status{Progressing, "Waiting for 2 pods to be ready..."}},
		"statefulset: partitioned rollout":        {"statefulset-partition-rolling", Status{Progressing, "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated..."}},
		"statefulset: partitioned rollout done":   {"statefulset-partition-done", Status{Healthy, "partitioned roll out complete: 2 new pods have been updated..."}},
		"statefulset: OnDelete strategy":          {"statefulset-ondelete", Status{Healthy, "statefulset has 3 ready pods"}},
		"statefulset: rolling update in progress": {"statefulset-rolling", Status{Progressing, "waiting for statefulset rolling update to complete 1 pods at revision db-3..."}},
		"statefulset: rolling update complete":    {"statefulset-healthy", Status{Healthy, "statefulset rolling update complete 3 pods at revision db-2..."}},

		"daemonset: observedGeneration behind": {"daemonset-generation-behind", Status{Progressing, "Waiting for rollout to finish: observed daemon set generation less than desired generation"}},
		"daemonset: OnDelete strategy":         {"daemonset-ondelete", Status{Healthy, "daemon set 0 out of 2 new pods have been updated"}},
		"daemonset: pods being updated":        {"daemonset-updating", Status{Progressing, `Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been updated...`}},
		"daemonset: pods unavailable":          {"daemonset-unavailable", Status{Progressing, `Waiting for daemon set "agent" rollout to finish: 1 of 2 updated pods are available...`}},
		"daemonset: rolled out":                {"daemonset-healthy", Status{Healthy, ""}},

		"replicaset: observedGeneration behind": {"replicaset-generation-behind", Status{Progressing, "Waiting for rollout to finish: observed replica set generation less than desired generation"}},
		"replicaset: replica failure":           {"replicaset-failure", Status{Degraded, `pods "web-5d-x" is forbidden: exceeded quota: compute`}},
		"replicaset: replicas unavailable":      {"replicaset-unavailable", Status{Progressing, "Waiting for rollout to finish: 1 out of 3 new replicas are available..."}},
		"replicaset: all available":             {"replicaset-healthy", Status{Healthy, ""}},

		"pod: pending":                                      {"pod-pending", Status{Progressing, "0/3 nodes are available: 3 Insufficient cpu."}},
		"pod: running and ready":                            {"pod-running-ready", Status{Healthy, ""}},
		"pod: running, not ready":                           {"pod-running-not-ready", Status{Progressing, ""}},
		"pod: running, not ready after a restart":           {"pod-running-restarted", Status{Degraded, ""}},
		"pod: crash loop":                                   {"pod-crashloop", Status{Degraded, "back-off 40s restarting failed container=main"}},
		"pod: image pull error":                             {"pod-err-image-pull", Status{Degraded, `failed to pull image "nginx:nope"`}},
		"pod: two containers failing":                       {"pod-two-errors", Status{Degraded, `Back-off pulling image "nginx:nope", secret "creds" not found`}},
		"pod: restart policy Never, running":                {"pod-never-running", Status{Progressing, ""}},
		"pod: restart policy OnFailure, running":            {"pod-onfailure-running", Status{Progressing, ""}},
		"pod: Never with ignore-restart-policy":             {"pod-never-ignore-restart-policy", Status{Healthy, ""}},
		"pod: Never with ignore-restart-policy, hook":       {"pod-never-ignore-restart-policy-hook", Status{Progressing, ""}},
		"pod: Never with ignore-restart-policy, Helm hook":  {"pod-never-ignore-restart-policy-helm-hook", Status{Progressing, ""}},
		"pod: Never, image pull back-off stays Progressing": {"pod-never-image-pull-backoff", Status{Progressing, ""}},
		"pod: failed with a message":                        {"pod-failed-with-message", Status{Degraded, "The node was low on resource: memory."}},
		"pod: failed init container":                        {"pod-failed-init-container", Status{Degraded, `container "init" failed with exit code 2`}},
		"pod: failed, OOM killed":                           {"pod-failed-oomkilled", Status{Degraded, "OOMKilled"}},
		"pod: failed with a termination message":            {"pod-failed-termination-message", Status{Degraded, `migration 42 failed: relation "users" exists`}},
		"pod: failed without detail":                        {"pod-failed-no-detail", Status{Degraded, ""}},
		"pod: succeeded":                                    {"pod-succeeded", Status{Healthy, ""}},
		"pod: phase Unknown":                                {"pod-phase-unknown", Status{Unknown, `node "n1" is unreachable`}},
		"pod: running without restart policy":               {"pod-running-no-restart-policy", Status{Unknown, ""}},

		"service: ClusterIP":                     {"service-clusterip", Status{Healthy, ""}},
		"service: load balancer without ingress": {"service-loadbalancer-pending", Status{Progressing, ""}},
		"service: load balancer with ingress":    {"service-loadbalancer-ready", Status{Healthy, ""}},
		"ingress: no address yet":                {"ingress-pending", Status{Progressing, ""}},
		"ingress: address published":             {"ingress-ready", Status{Healthy, ""}},
		"ingress: extensions group":              {"ingress-extensions-ready", Status{Healthy, ""}},
		"pvc: bound":                             {"pvc-bound", Status{Healthy, ""}},
		"pvc: pending":                           {"pvc-pending", Status{Progressing, ""}},
		"pvc: lost":                              {"pvc-lost", Status{Degraded, ""}},
		"pvc: no phase":                          {"pvc-no-phase", Status{Unknown, ""}},

		"job: running":                  {"job-running", Status{Progressing, ""}},
		"job: complete":                 {"job-complete", Status{Healthy, "Reached expected number of succeeded pods"}},
		"job: failed":                   {"job-failed", Status{Degraded, "Job has reached the specified backoff limit"}},
		"job: suspended":                {"job-suspended", Status{Suspended, "Job suspended"}},
		"job: resumed after suspension": {"job-resumed", Status{Healthy, "Job resumed"}},

		"hpa v2: able to scale":                          {"hpa-v2-healthy", Status{Healthy, "recommended size matches current size"}},
		"hpa v2: cannot get scale":                       {"hpa-v2-failed-get-scale", Status{Degraded, `the HPA controller was unable to get the target's current scale: deployments/scale.apps "web" not found`}},
		"hpa v2: metric failure after healthy condition": {"hpa-v2-external-metric-after-healthy", Status{Degraded, "the HPA was unable to compute the replica count: unable to get external metric default/queue_depth"}},
		"hpa v2: no healthy condition":                   {"hpa-v2-progressing", Status{Progressing, "Waiting to Autoscale"}},
		"hpa v2: scaling limited":                        {"hpa-v2-scaling-limited", Status{Healthy, "the desired replica count is more than the maximum replica count"}},
		"hpa v2beta2: able to scale":                     {"hpa-v2beta2-healthy", Status{Healthy, "recommended size matches current size"}},
		"hpa v1: no conditions annotation":               {"hpa-v1-no-annotation", Status{Progressing, "Waiting to Autoscale"}},
		"hpa v1: missing resource request":               {"hpa-v1-degraded", Status{Degraded, "the HPA was unable to compute the replica count: missing request for cpu"}},
		"hpa v1: able to scale":                          {"hpa-v1-healthy", Status{Healthy, "recommended size matches current size"}},
		"hpa v1: empty conditions annotation":            {"hpa-v1-empty-annotation", Status{Progressing, "Waiting to Autoscale"}},
		"hpa v1: malformed conditions annotation":        {"hpa-v1-bad-annotation", Status{Unknown, "failed to convert unstructured HPA to typed: annotation autoscaling.alpha.kubernetes.io/conditions: invalid character 'n' looking for beginning of object key string"}},
		"hpa: unsupported version":                       {"hpa-unsupported-version", Status{Unknown, "unsupported HPA GVK: autoscaling/v3, Kind=HorizontalPodAutoscaler"}},

		"apiservice: available":         {"apiservice-available", Status{Healthy, "Passed: all checks passed"}},
		"apiservice: unavailable":       {"apiservice-unavailable", Status{Progressing, "FailedDiscoveryCheck: failing or missing response from https://10.96.0.20:443/apis/metrics.k8s.io/v1beta1"}},
		"apiservice: not processed yet": {"apiservice-no-conditions", Status{Progressing, "Waiting to be processed"}},
		"apiservice: v1beta1 available": {"apiservice-v1beta1-available", Status{Healthy, "Local: Local APIServices are always available"}},

		"workflow: pending":       {"workflow-pending", Status{Progressing, ""}},
		"workflow: running":       {"workflow-running", Status{Progressing, "step 2 of 5"}},
		"workflow: succeeded":     {"workflow-succeeded", Status{Healthy, ""}},
		"workflow: failed":        {"workflow-failed", Status{Degraded, `child "build-x" failed`}},
		"workflow: error":         {"workflow-error", Status{Degraded, "pod deleted"}},
		"workflow: no status":     {"workflow-no-status", Status{Progressing, ""}},
		"workflow: unknown phase": {"workflow-strange-phase", Status{Unknown, ""}},
	}
	assessor := newTestAssessor(t, Options{ArgoParity: true})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := readFixture(t, filepath.Join("builtin", tc.fixture+".yaml"))
			got := assessor.Explain(obj)
			if diff := cmp.Diff(tc.want, got.Status); diff != "" {
				t.Errorf("health mismatch (-want +got):\n%s", diff)
			}
			if got.Source != SourceBuiltin {
				t.Errorf("source = %q, want %q", got.Source, SourceBuiltin)
			}
		})
	}
}
