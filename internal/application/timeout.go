package application

import (
	"fmt"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// AnnotationSyncTimeout bounds how long one sync operation of the app may
// run, retries included (a Go duration such as "10m"): past it the
// operation fails with what it waited for. Argo CD has no per-app field
// for it, only its controller's --sync-timeout.
const AnnotationSyncTimeout = "wavecd.io/sync-timeout"

// SyncTimeout returns the app's wavecd.io/sync-timeout; 0 without one. An
// unparsable or non-positive value is an error naming the annotation.
func SyncTimeout(app *v1alpha1.Application) (time.Duration, error) {
	v := strings.TrimSpace(app.Annotations[AnnotationSyncTimeout])
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("application %s: annotation %s: %q is not a positive duration such as 10m", app.Name, AnnotationSyncTimeout, v)
	}
	return d, nil
}
