package workloads

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// BackoffAnnotation sets the base of a pod's restart back-off ("1s"); the
// back-off doubles per crash up to 30 times the base, as the kubelet's 10 s
// doubles up to 300 s.
const BackoffAnnotation = "localcluster.wavecd.io/backoff"

// Requirement is one Service port a pod needs.
type Requirement struct {
	Service   string
	Namespace string
	Port      int32
}

func (r Requirement) String() string { return fmt.Sprintf("%s.%s:%d", r.Service, r.Namespace, r.Port) }

// ParseRequires parses the value of the requires annotation:
// "<service>.<namespace>:<port>[,...]", where the host may also be written
// <service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local.
func ParseRequires(value string) ([]Requirement, error) {
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("annotation %s: no entries: want <service>.<namespace>:<port>[,...]", stages.RequiresAnnotation)
	}
	var out []Requirement
	for i, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("annotation %s: entry %d is empty", stages.RequiresAnnotation, i+1)
		}
		r, err := parseRequirement(entry)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: entry %q: %w", stages.RequiresAnnotation, entry, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRequirement(entry string) (Requirement, error) {
	host, portStr, ok := strings.Cut(entry, ":")
	if !ok {
		return Requirement{}, fmt.Errorf("no port: want <service>.<namespace>:<port>")
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return Requirement{}, fmt.Errorf("port %q is not a number from 1 to 65535", portStr)
	}
	host = strings.TrimSuffix(strings.TrimSuffix(host, ".cluster.local"), ".svc")
	svc, ns, ok := strings.Cut(host, ".")
	if !ok || strings.Contains(ns, ".") {
		return Requirement{}, fmt.Errorf("host %q: want <service>.<namespace>", host)
	}
	if msgs := validation.IsDNS1035Label(svc); len(msgs) > 0 {
		return Requirement{}, fmt.Errorf("service %q: %s", svc, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return Requirement{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(msgs, "; "))
	}
	return Requirement{Service: svc, Namespace: ns, Port: int32(port)}, nil
}

// Backoff is a container restart back-off schedule.
type Backoff struct {
	Base, Max time.Duration
}

// KubeletBackoff is the kubelet's schedule: 10 s, doubling, capped at 300 s.
var KubeletBackoff = Backoff{Base: 10 * time.Second, Max: 300 * time.Second}

// ParseBackoff parses the back-off annotation's value; "" gives the
// kubelet's schedule.
func ParseBackoff(value string) (Backoff, error) {
	if value == "" {
		return KubeletBackoff, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return Backoff{}, fmt.Errorf("annotation %s: %q is not a positive duration such as 1s", BackoffAnnotation, value)
	}
	return Backoff{Base: d, Max: 30 * d}, nil
}

// Delay is the back-off after the given number of crashes (1 or more).
func (b Backoff) Delay(crashes int32) time.Duration {
	d := b.Base
	for i := int32(1); i < crashes && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}
