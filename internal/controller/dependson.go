package controller

import (
	"fmt"
	"strings"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
)

// AnnotationDependsOn lists apps (comma-separated names in the same
// namespace) that must be Synced and Healthy before this app syncs
// (application.AnnotationDependsOn).
const AnnotationDependsOn = application.AnnotationDependsOn

// dependencyWait says why app may not sync yet, or "" when every
// dependency is Synced and Healthy. apps holds every app of the namespace.
func dependencyWait(app *v1alpha1.Application, apps map[string]*v1alpha1.Application) string {
	deps := application.DependsOn(app)
	if len(deps) == 0 {
		return ""
	}
	if cycle := findCycle(app.Name, apps); cycle != nil {
		return "dependency cycle: " + strings.Join(cycle, " -> ")
	}
	var waits []string
	for _, d := range deps {
		dep, ok := apps[d]
		switch {
		case !ok:
			waits = append(waits, fmt.Sprintf("%s does not exist", d))
		case dep.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || dep.Status.Health.Status != "Healthy":
			waits = append(waits, fmt.Sprintf("%s is %s/%s", d, orUnknown(string(dep.Status.Sync.Status)), orUnknown(string(dep.Status.Health.Status))))
		case dep.Operation != nil || (dep.Status.OperationState != nil && !dep.Status.OperationState.Phase.Completed()):
			waits = append(waits, fmt.Sprintf("%s is syncing", d))
		}
	}
	if len(waits) == 0 {
		return ""
	}
	return "waiting for dependencies: " + strings.Join(waits, "; ")
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

// findCycle returns a dependency cycle through start, or nil.
func findCycle(start string, apps map[string]*v1alpha1.Application) []string {
	var path []string
	onPath := map[string]bool{}
	done := map[string]bool{}
	var visit func(n string) []string
	visit = func(n string) []string {
		if onPath[n] {
			for j, p := range path {
				if p == n {
					return append(append([]string{}, path[j:]...), n)
				}
			}
		}
		if done[n] {
			return nil
		}
		app, ok := apps[n]
		if !ok {
			return nil
		}
		onPath[n] = true
		path = append(path, n)
		for _, d := range application.DependsOn(app) {
			if c := visit(d); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		onPath[n] = false
		done[n] = true
		return nil
	}
	c := visit(start)
	for _, n := range c {
		if n == start {
			return c
		}
	}
	return nil
}
