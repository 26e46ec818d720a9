package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// annotationHPAConditions carries an autoscaling/v1 HPA's conditions as JSON.
const annotationHPAConditions = "autoscaling.alpha.kubernetes.io/conditions"

const hpaWaiting = "Waiting to Autoscale"

// condScalingActive is the HPA condition that says whether it can scale.
const condScalingActive = "ScalingActive"

// hpaFailures are the condition type and reason pairs that make an HPA
// Degraded: it cannot read or update its target's scale, or cannot read a metric.
var hpaFailures = map[[2]string]bool{
	{"AbleToScale", "FailedGetScale"}:                       true,
	{"AbleToScale", "FailedUpdateScale"}:                    true,
	{condScalingActive, "FailedGetResourceMetric"}:          true,
	{condScalingActive, "FailedGetContainerResourceMetric"}: true,
	{condScalingActive, "FailedGetObjectMetric"}:            true,
	{condScalingActive, "FailedGetPodsMetric"}:              true,
	{condScalingActive, "FailedGetExternalMetric"}:          true,
	{condScalingActive, "InvalidSelector"}:                  true,
}

// hpaHealth reads the HPA's conditions (from status in v2, from an annotation
// in v1): any failure makes it Degraded, otherwise AbleToScale or ScalingLimited
// being true makes it Healthy, otherwise it is Progressing.
func hpaHealth(obj *unstructured.Unstructured, f *fields) *Status {
	var conds []condition
	if obj.GroupVersionKind().Version == "v1" {
		annotation, ok := obj.GetAnnotations()[annotationHPAConditions]
		if !ok {
			return status(Progressing, hpaWaiting)
		}
		var err error
		if conds, err = parseHPAAnnotation(annotation); err != nil {
			f.err = err
			return nil
		}
	} else {
		conds = f.conditions("status", "conditions")
	}
	for _, c := range conds {
		if hpaFailures[[2]string{c.Type, c.Reason}] {
			return status(Degraded, c.Message)
		}
	}
	for _, c := range conds {
		if (c.Type == "AbleToScale" || c.Type == "ScalingLimited") && c.Status == "True" {
			return status(Healthy, c.Message)
		}
	}
	return status(Progressing, hpaWaiting)
}

func parseHPAAnnotation(annotation string) ([]condition, error) {
	var raw []struct{ Type, Status, Reason, Message string }
	if err := json.Unmarshal([]byte(annotation), &raw); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", annotationHPAConditions, err)
	}
	conds := make([]condition, len(raw))
	for i, r := range raw {
		conds[i] = condition{Type: r.Type, Status: r.Status, Reason: r.Reason, Message: r.Message}
	}
	return conds, nil
}
