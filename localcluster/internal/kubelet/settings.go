package kubelet

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/deps"
)

// Annotations kept from the KWOK stages the cluster used before, and the
// exit code annotation; each overrides what the spec and profile say.
const (
	ReadyDelayAnnotation    = "pod-ready.stage.kwok.x-k8s.io/delay"
	ReadyJitterAnnotation   = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	CompleteDelayAnnotation = "pod-complete.stage.kwok.x-k8s.io/delay"
	DeleteDelayAnnotation   = "pod-delete.stage.kwok.x-k8s.io/delay"
	ExitCodeAnnotation      = "localcluster.wavecd.io/exit-code"
)

// Defaults of the simulated kubelet, before the time scale.
const (
	// DefaultStartDelay is how long containers are ContainerCreating.
	DefaultStartDelay = time.Second
	// DefaultRunTime is how long a run-to-completion container runs.
	DefaultRunTime = time.Second
	// DefaultCrashAfter is how long a container whose Services are missing
	// runs before it exits 1; a Service that turns ready within it saves it.
	DefaultCrashAfter = time.Second
)

// Settings are how a pod's containers behave, already scaled.
type Settings struct {
	// StartDelay is how long containers are created before they run.
	StartDelay time.Duration
	// ReadyAt, when set, starts the containers Ready at once this long
	// after the pod is initialised (the pod-ready annotation); probes and
	// ReadyAfter do not apply.
	ReadyAt *time.Duration
	// ReadyAfter is when a container answers its probes after its start.
	ReadyAfter time.Duration
	// RunTime, when set, is how long a container runs before it exits.
	RunTime  *time.Duration
	ExitCode int32
	Backoff  Backoff
	// CrashAfter is how long a container whose Services are missing runs.
	CrashAfter time.Duration
	// DeleteDelay is how long a deleted pod takes to go.
	DeleteDelay time.Duration
	// Scale multiplies the probes' timings from the spec.
	Scale float64
	// Requires are the Services every main container needs besides what
	// its spec names (annotation and profile).
	Requires []deps.Requirement
}

// SettingsFor builds pod p's settings from its annotations and the
// profile's workload entries, scaled by scale. Invalid annotations are
// reported and left out.
func SettingsFor(p *corev1.Pod, workloads []config.Workload, scale float64) (Settings, error) {
	s := Settings{StartDelay: DefaultStartDelay, Backoff: KubeletBackoff, CrashAfter: DefaultCrashAfter, Scale: scale}
	if p.Spec.RestartPolicy == corev1.RestartPolicyNever || p.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		s.RunTime = ptrTo(DefaultRunTime)
	}
	owner := OwnerName(p)
	for _, w := range workloads {
		if w.Matches(p, owner) {
			s.overlay(w)
		}
	}
	errs := s.annotations(p.Annotations, string(p.UID)+"/"+p.Name)
	s.scale(scale)
	return s, errors.Join(errs...)
}

// overlay lays a matching profile entry over s.
func (s *Settings) overlay(w config.Workload) {
	if w.ReadyAfter != nil {
		s.ReadyAfter = w.ReadyAfter.Duration
	}
	if w.RunTime != nil {
		s.RunTime = ptrTo(w.RunTime.Duration)
	}
	if w.ExitCode != nil {
		s.ExitCode = *w.ExitCode
	}
	if len(w.Requires) > 0 {
		rs, _ := deps.ParseRequires(strings.Join(w.Requires, ","), "from the profile") // validated with the profile
		s.Requires = append(s.Requires, rs...)
	}
}

// annotations applies the override annotations and returns what did not parse.
func (s *Settings) annotations(a map[string]string, seed string) []error {
	var errs []error
	if v := a[deps.RequiresAnnotation]; v != "" {
		rs, err := deps.ParseRequires(v, "from annotation "+deps.RequiresAnnotation)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s: %w", deps.RequiresAnnotation, err))
		}
		s.Requires = append(s.Requires, rs...)
	}
	if b, err := ParseBackoff(a[BackoffAnnotation]); err != nil {
		errs = append(errs, err)
	} else {
		s.Backoff = b
	}
	if d, ok, err := annotationDuration(a, ReadyDelayAnnotation); err != nil {
		errs = append(errs, err)
	} else if ok {
		jitter, hasJitter, err := annotationDuration(a, ReadyJitterAnnotation)
		if err != nil {
			errs = append(errs, err)
		}
		if hasJitter {
			d = jittered(d, jitter, seed)
		}
		s.ReadyAt = &d
	}
	if d, ok, err := annotationDuration(a, CompleteDelayAnnotation); err != nil {
		errs = append(errs, err)
	} else if ok && s.RunTime != nil {
		s.RunTime = &d
	}
	if d, ok, err := annotationDuration(a, DeleteDelayAnnotation); err != nil {
		errs = append(errs, err)
	} else if ok {
		s.DeleteDelay = d
	}
	if v, ok := a[ExitCodeAnnotation]; ok {
		code, err := strconv.ParseUint(v, 10, 8)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s: %q is not an exit code from 0 to 255", ExitCodeAnnotation, v))
		} else {
			s.ExitCode = int32(code)
		}
	}
	return errs
}

func (s *Settings) scale(f float64) {
	s.StartDelay = scaled(s.StartDelay, f)
	s.ReadyAfter = scaled(s.ReadyAfter, f)
	s.CrashAfter = scaled(s.CrashAfter, f)
	s.DeleteDelay = scaled(s.DeleteDelay, f)
	s.Backoff = s.Backoff.Scaled(f)
	if s.ReadyAt != nil {
		s.ReadyAt = ptrTo(scaled(*s.ReadyAt, f))
	}
	if s.RunTime != nil {
		s.RunTime = ptrTo(scaled(*s.RunTime, f))
	}
}

func annotationDuration(a map[string]string, key string) (time.Duration, bool, error) {
	v, ok := a[key]
	if !ok || v == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false, fmt.Errorf("annotation %s: %q is not a duration", key, v)
	}
	return d, true, nil
}

// jittered is KWOK's delay with a jitter: a jitter at most the delay
// replaces it, a longer one draws the delay from [delay, jitter). The draw
// is the pod's own (seeded by its UID and name), so it does not change
// from one look to the next.
func jittered(delay, jitter time.Duration, seed string) time.Duration {
	if jitter <= delay {
		return jitter
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	return delay + time.Duration(rand.New(rand.NewPCG(h.Sum64(), 0)).Int64N(int64(jitter-delay)))
}

// OwnerName names the workload that runs pod p: the Deployment behind a
// ReplicaSet it made, the CronJob behind a Job it made, else the
// controlling owner, else the pod.
func OwnerName(p *corev1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return p.Name
	}
	if hash := p.Labels["pod-template-hash"]; ref.Kind == "ReplicaSet" && hash != "" {
		return strings.TrimSuffix(ref.Name, "-"+hash)
	}
	if ref.Kind == "Job" {
		if cron, _, ok := cutLastDash(ref.Name); ok && isDigits(ref.Name[len(cron)+1:]) {
			return cron // CronJob jobs are <cronjob>-<scheduled minute>
		}
	}
	return ref.Name
}

func cutLastDash(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil && len(s) >= 8
}

func ptrTo[T any](v T) *T { return &v }
