package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/hook"
)

// containerStatus is the part of a Pod's container status the check reads.
type containerStatus struct {
	name                                string
	waitingReason, waitingMessage       string
	waiting, terminated, lastTerminated bool
	terminatedMessage, terminatedReason string
	exitCode                            int64
}

func readContainerStatuses(f *fields, key string) []containerStatus {
	items := f.objects("status", key)
	out := make([]containerStatus, 0, len(items))
	for _, item := range items {
		c := newFields(item)
		cs := containerStatus{
			name:              c.str("name"),
			waiting:           c.object("state", "waiting") != nil,
			waitingReason:     c.str("state", "waiting", "reason"),
			waitingMessage:    c.str("state", "waiting", "message"),
			terminated:        c.object("state", "terminated") != nil,
			terminatedMessage: c.str("state", "terminated", "message"),
			terminatedReason:  c.str("state", "terminated", "reason"),
			exitCode:          c.count("state", "terminated", "exitCode"),
			lastTerminated:    c.object("lastState", "terminated") != nil,
		}
		if c.err != nil && f.err == nil {
			f.err = fmt.Errorf(".status.%s[]%w", key, c.err)
		}
		out = append(out, cs)
	}
	return out
}

// failMessage explains why a terminated container failed, or returns "".
func (c containerStatus) failMessage() string {
	switch {
	case !c.terminated:
		return ""
	case c.terminatedMessage != "":
		return c.terminatedMessage
	case c.terminatedReason == "OOMKilled":
		return c.terminatedReason
	case c.exitCode != 0:
		return fmt.Sprintf("container %q failed with exit code %d", c.name, c.exitCode)
	}
	return ""
}

// waitingOnError reports a container stuck on an error such as
// CrashLoopBackOff, ImagePullBackOff or ErrImagePull.
func (c containerStatus) waitingOnError() bool {
	r := c.waitingReason
	return c.waiting && (strings.HasPrefix(r, "Err") || strings.HasSuffix(r, "Error") || strings.HasSuffix(r, "BackOff"))
}

// podHealth follows Argo CD: Pods that restart always (or opt in with
// argocd.argoproj.io/ignore-restart-policy and are not hooks) are long-running
// and Degraded on container errors; other running Pods have a finite life,
// such as hooks, and stay Progressing until they finish.
func podHealth(obj *unstructured.Unstructured, f *fields) *Status {
	restartPolicy := f.str("spec", "restartPolicy")
	_, ignoreRestartPolicy := obj.GetAnnotations()[AnnotationIgnoreRestartPolicy]
	longRunning := restartPolicy == "Always" || (ignoreRestartPolicy && !hook.IsHook(obj))
	containers := readContainerStatuses(f, "containerStatuses")
	message := f.str("status", "message")

	if longRunning {
		var messages []string
		for _, c := range containers {
			if c.waitingOnError() {
				messages = append(messages, c.waitingMessage)
			}
		}
		if len(messages) > 0 {
			return status(Degraded, strings.Join(messages, ", "))
		}
	}

	switch f.str("status", "phase") {
	case "Pending":
		return status(Progressing, message)
	case "Succeeded":
		return status(Healthy, message)
	case "Failed":
		if message != "" {
			return status(Degraded, message)
		}
		for _, c := range append(readContainerStatuses(f, "initContainerStatuses"), containers...) {
			if msg := c.failMessage(); msg != "" {
				return status(Degraded, msg)
			}
		}
		return status(Degraded, "")
	case "Running":
		if !longRunning {
			if restartPolicy != "OnFailure" && restartPolicy != "Never" {
				break
			}
			return status(Progressing, message)
		}
		if podReady(f) {
			return status(Healthy, message)
		}
		for _, c := range containers {
			if c.lastTerminated {
				return status(Degraded, message)
			}
		}
		return status(Progressing, message)
	}
	return status(Unknown, message)
}

func podReady(f *fields) bool {
	cond := findCondition(f.conditions("status", "conditions"), "Ready")
	return cond != nil && cond.Status == "True"
}
