package config

import (
	"fmt"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavecd/wavecd/localcluster/internal/deps"
)

// Workload overrides how the pods it matches behave where their specs
// cannot say it. A pod matches when it is in Namespace (if set), belongs
// to the workload Name (a Deployment, StatefulSet, DaemonSet, Job or
// CronJob of that name, or the pod itself; if set) and carries the labels
// of Selector (if set). Every matching entry applies, later ones winning.
type Workload struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Selector  string `json:"selector,omitempty"`
	// ReadyAfter is how long a container takes after its start to answer
	// its probes (or, without a probe, to count as Ready).
	ReadyAfter *metav1.Duration `json:"readyAfter,omitempty"`
	// Requires lists Services the containers need on top of what their
	// specs name: "<service>.<namespace>:<port>".
	Requires []string `json:"requires,omitempty"`
	// RunTime is how long a container runs before it exits: the run time
	// of a Job's pod (1s by default), or the life of a container that
	// crashes (restartPolicy Always).
	RunTime *metav1.Duration `json:"runTime,omitempty"`
	// ExitCode is the code containers exit with when their run time ends.
	ExitCode *int32 `json:"exitCode,omitempty"`
}

// Matches reports whether the workload entry applies to pod p, whose
// owning workload is named owner.
func (w Workload) Matches(p *corev1.Pod, owner string) bool {
	if w.Namespace != "" && w.Namespace != p.Namespace {
		return false
	}
	if w.Name != "" && w.Name != owner && w.Name != p.Name {
		return false
	}
	if w.Selector != "" {
		sel, err := labels.Parse(w.Selector)
		if err != nil || !sel.Matches(labels.Set(p.Labels)) {
			return false
		}
	}
	return true
}

// IngressController gives LoadBalancer Services and Ingresses addresses.
type IngressController struct {
	// Addresses are IPs or host names, handed out in turn to LoadBalancer
	// Services; Ingresses get the first.
	Addresses []string `json:"addresses"`
	// IngressClasses are the classes whose Ingresses get an address;
	// empty means every Ingress.
	IngressClasses []string `json:"ingressClasses,omitempty"`
	// Delay is how long an address takes to appear (1s by default).
	Delay *metav1.Duration `json:"delay,omitempty"`
}

// maxTimeScale bounds --time-scale: slower than real makes no rehearsal.
const maxTimeScale = 10

func (c Config) validateSimulation() []error {
	var errs []error
	if c.TimeScale < 0 || c.TimeScale > maxTimeScale {
		errs = append(errs, fmt.Errorf("time scale %g: want a factor above 0 and at most %d, such as 0.1", c.TimeScale, maxTimeScale))
	}
	errs = append(errs, nonNegative("nodeStartup", c.NodeStartup)...)
	for i, w := range c.Workloads {
		errs = append(errs, w.validate(fmt.Sprintf("workloads[%d]", i))...)
	}
	if ic := c.IngressController; ic != nil {
		if len(ic.Addresses) == 0 {
			errs = append(errs, fmt.Errorf("ingressController.addresses: at least one IP or host name is required"))
		}
		for i, a := range ic.Addresses {
			if net.ParseIP(a) == nil && len(validation.IsDNS1123Subdomain(a)) > 0 {
				errs = append(errs, fmt.Errorf("ingressController.addresses[%d]: %q is neither an IP nor a host name", i, a))
			}
		}
		errs = append(errs, nonNegative("ingressController.delay", ic.Delay)...)
	}
	return errs
}

func (w Workload) validate(path string) []error {
	var errs []error
	if w.Namespace == "" && w.Name == "" && w.Selector == "" {
		errs = append(errs, fmt.Errorf("%s: set namespace, name or selector (an entry for every pod is a mistake)", path))
	}
	if w.Selector != "" {
		if _, err := labels.Parse(w.Selector); err != nil {
			errs = append(errs, fmt.Errorf("%s.selector: %q is not a label selector: %w", path, w.Selector, err))
		}
	}
	errs = append(errs, nonNegative(path+".readyAfter", w.ReadyAfter)...)
	errs = append(errs, nonNegative(path+".runTime", w.RunTime)...)
	if len(w.Requires) > 0 {
		if _, err := deps.ParseRequires(strings.Join(w.Requires, ","), ""); err != nil {
			errs = append(errs, fmt.Errorf("%s.requires: %w", path, err))
		}
	}
	if w.ExitCode != nil && (*w.ExitCode < 0 || *w.ExitCode > 255) {
		errs = append(errs, fmt.Errorf("%s.exitCode: %d is not from 0 to 255", path, *w.ExitCode))
	}
	return errs
}

func nonNegative(path string, d *metav1.Duration) []error {
	if d != nil && d.Duration < 0 {
		return []error{fmt.Errorf("%s: %s is negative", path, d.Duration)}
	}
	return nil
}

// Duration returns d's value, or def when d is nil.
func Duration(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// Simulation is what the workloads controller runs pods by, beyond their
// specs: the profile's workload entries, its ingress controller and the
// time scale.
type Simulation struct {
	Workloads         []Workload         `json:"workloads,omitempty"`
	IngressController *IngressController `json:"ingressController,omitempty"`
	TimeScale         float64            `json:"timeScale,omitempty"`
}

// Simulation returns c's simulation settings.
func (c Config) Simulation() Simulation {
	return Simulation{Workloads: c.Workloads, IngressController: c.IngressController, TimeScale: c.TimeScale}
}
