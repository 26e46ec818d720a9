package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The checks in this file follow kubectl's rollout status, as Argo CD does.

func deploymentHealth(obj *unstructured.Unstructured, f *fields) *Status {
	if f.boolean("spec", "paused") {
		return status(Suspended, "Deployment is paused")
	}
	if obj.GetGeneration() > f.count("status", "observedGeneration") {
		return status(Progressing, "Waiting for rollout to finish: observed deployment generation less than desired generation")
	}
	replicas, hasReplicas := f.integer("spec", "replicas")
	updated := f.count("status", "updatedReplicas")
	current := f.count("status", "replicas")
	available := f.count("status", "availableReplicas")
	cond := findCondition(f.conditions("status", "conditions"), "Progressing")
	switch {
	case cond != nil && cond.Reason == "ProgressDeadlineExceeded":
		return statusf(Degraded, "Deployment %q exceeded its progress deadline", obj.GetName())
	case hasReplicas && updated < replicas:
		return statusf(Progressing, "Waiting for rollout to finish: %d out of %d new replicas have been updated...", updated, replicas)
	case current > updated:
		return statusf(Progressing, "Waiting for rollout to finish: %d old replicas are pending termination...", current-updated)
	case available < updated:
		return statusf(Progressing, "Waiting for rollout to finish: %d of %d updated replicas are available...", available, updated)
	}
	return status(Healthy, "")
}

func statefulSetHealth(obj *unstructured.Unstructured, f *fields) *Status {
	observed := f.count("status", "observedGeneration")
	if observed == 0 || obj.GetGeneration() > observed {
		return status(Progressing, "Waiting for statefulset spec update to be observed...")
	}
	replicas, hasReplicas := f.integer("spec", "replicas")
	ready := f.count("status", "readyReplicas")
	updated := f.count("status", "updatedReplicas")
	if hasReplicas && ready < replicas {
		return statusf(Progressing, "Waiting for %d pods to be ready...", replicas-ready)
	}
	strategy := f.str("spec", "updateStrategy", "type")
	if strategy == "RollingUpdate" && f.object("spec", "updateStrategy", "rollingUpdate") != nil {
		partition, hasPartition := f.integer("spec", "updateStrategy", "rollingUpdate", "partition")
		if hasReplicas && hasPartition && updated < replicas-partition {
			return statusf(Progressing, "Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, replicas-partition)
		}
		return statusf(Healthy, "partitioned roll out complete: %d new pods have been updated...", updated)
	}
	if strategy == "OnDelete" {
		return statusf(Healthy, "statefulset has %d ready pods", ready)
	}
	updateRevision := f.str("status", "updateRevision")
	currentRevision := f.str("status", "currentRevision")
	if updateRevision != currentRevision {
		return statusf(Progressing, "waiting for statefulset rolling update to complete %d pods at revision %s...", updated, updateRevision)
	}
	return statusf(Healthy, "statefulset rolling update complete %d pods at revision %s...", f.count("status", "currentReplicas"), currentRevision)
}

func daemonSetHealth(obj *unstructured.Unstructured, f *fields) *Status {
	if obj.GetGeneration() > f.count("status", "observedGeneration") {
		return status(Progressing, "Waiting for rollout to finish: observed daemon set generation less than desired generation")
	}
	updated := f.count("status", "updatedNumberScheduled")
	desired := f.count("status", "desiredNumberScheduled")
	available := f.count("status", "numberAvailable")
	if f.str("spec", "updateStrategy", "type") == "OnDelete" {
		return statusf(Healthy, "daemon set %d out of %d new pods have been updated", updated, desired)
	}
	if updated < desired {
		return statusf(Progressing, "Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", obj.GetName(), updated, desired)
	}
	if available < desired {
		return statusf(Progressing, "Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", obj.GetName(), available, desired)
	}
	return status(Healthy, "")
}

func replicaSetHealth(obj *unstructured.Unstructured, f *fields) *Status {
	if obj.GetGeneration() > f.count("status", "observedGeneration") {
		return status(Progressing, "Waiting for rollout to finish: observed replica set generation less than desired generation")
	}
	cond := findCondition(f.conditions("status", "conditions"), "ReplicaFailure")
	if cond != nil && cond.Status == "True" {
		return status(Degraded, cond.Message)
	}
	replicas, hasReplicas := f.integer("spec", "replicas")
	available := f.count("status", "availableReplicas")
	if hasReplicas && available < replicas {
		return statusf(Progressing, "Waiting for rollout to finish: %d out of %d new replicas are available...", available, replicas)
	}
	return status(Healthy, "")
}
