package v1alpha1

import (
	"fmt"
	"time"
)

// ParseDuration reads a duration as Argo CD's settings and retry backoffs
// write it: a Go duration ("90s", "2m") or plain seconds ("90").
func ParseDuration(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	d, err := time.ParseDuration(v + "s")
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	return d, nil
}
