package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobHealth: a Job is Progressing until it has a Complete, Failed or Suspended
// condition; Failed wins over Suspended, which wins over Complete.
func jobHealth(_ *unstructured.Unstructured, f *fields) *Status {
	var failed, complete, suspended bool
	var failMessage, message string
	for _, c := range f.conditions("status", "conditions") {
		switch c.Type {
		case "Failed":
			failed, complete = true, true
			failMessage = c.Message
		case "Complete":
			complete = true
			message = c.Message
		case "Suspended":
			complete = true
			message = c.Message
			suspended = suspended || c.Status == "True"
		}
	}
	switch {
	case !complete:
		return status(Progressing, message)
	case failed:
		return status(Degraded, failMessage)
	case suspended:
		return status(Suspended, message)
	}
	return status(Healthy, message)
}

// workflowHealth maps an Argo Workflow's phase and passes its message on. It
// reads nothing but status.phase and status.message, whatever the version.
func workflowHealth(_ *unstructured.Unstructured, f *fields) *Status {
	message := f.str("status", "message")
	switch f.str("status", "phase") {
	case "", "Pending", "Running":
		return status(Progressing, message)
	case "Succeeded":
		return status(Healthy, message)
	case "Failed", "Error":
		return status(Degraded, message)
	}
	return status(Unknown, message)
}
