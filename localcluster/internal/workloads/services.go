package workloads

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"

	"github.com/wavecd/wavecd/localcluster/internal/deps"
	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
)

// Expected Services: a ConfigMap in kube-system whose data key "services"
// lists, one "namespace/name" a line, Services that count as a pod's
// requirements before they exist (a rehearsal writes the Services it
// rendered from the whole bootstrap).
const (
	ExpectedServicesNamespace = "kube-system"
	ExpectedServicesConfigMap = "localcluster-expected-services"
	ExpectedServicesKey       = "services"
)

// serviceState answers what the cluster's Services offer: which exist or
// are expected, and which have a ready endpoint.
type serviceState struct {
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister

	mu       sync.RWMutex
	expected map[string]bool // namespace/name
}

// setExpected replaces the expected Services with those the ConfigMap
// lists.
func (s *serviceState) setExpected(cm *corev1.ConfigMap) {
	expected := map[string]bool{}
	if cm != nil {
		for _, line := range strings.Split(cm.Data[ExpectedServicesKey], "\n") {
			if ns, name, ok := strings.Cut(strings.TrimSpace(line), "/"); ok && ns != "" && name != "" {
				expected[ns+"/"+name] = true
			}
		}
	}
	s.mu.Lock()
	s.expected = expected
	s.mu.Unlock()
}

func (s *serviceState) isExpected(ns, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.expected[ns+"/"+name]
}

// forPod is the view of pod p's containers: a Service that selects p
// itself is not a requirement (a process names its own Service to
// advertise it, not to wait for it).
func (s *serviceState) forPod(p *corev1.Pod) deps.Services { return podView{s: s, pod: p} }

type podView struct {
	s   *serviceState
	pod *corev1.Pod
}

func (v podView) Lookup(ns, name string) ([]int32, bool) {
	svc, err := v.s.services.Services(ns).Get(name)
	if err != nil {
		return nil, v.s.isExpected(ns, name)
	}
	if ns == v.pod.Namespace && len(svc.Spec.Selector) > 0 &&
		labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(v.pod.Labels)) {
		return nil, false
	}
	ports := make([]int32, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = p.Port
	}
	return ports, true
}

// unmet returns the requirements without a ready endpoint now.
func (s *serviceState) unmet(rs []deps.Requirement) []kubelet.Unmet {
	var out []kubelet.Unmet
	for _, r := range rs {
		if why := s.why(r); why != "" {
			out = append(out, kubelet.Unmet{Requirement: r, Why: why})
		}
	}
	return out
}

// why says why r is not met, or "" when it is.
func (s *serviceState) why(r deps.Requirement) string {
	svc, err := s.services.Services(r.Namespace).Get(r.Service)
	if apierrors.IsNotFound(err) {
		return "not created yet"
	}
	if err != nil {
		return err.Error()
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return "" // outside the cluster: nothing to check
	}
	portName, found := "", r.Port == 0
	for _, sp := range svc.Spec.Ports {
		if sp.Port == r.Port {
			portName, found = sp.Name, true
		}
	}
	if !found {
		return "no such port"
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: r.Service})
	slices, err := s.slices.EndpointSlices(r.Namespace).List(sel)
	if err != nil {
		return err.Error()
	}
	for _, es := range slices {
		if (r.Port == 0 || hasPort(es, portName)) && hasReadyEndpoint(es) {
			return ""
		}
	}
	return "no ready endpoint"
}

func hasPort(s *discoveryv1.EndpointSlice, name string) bool {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == name || p.Name == nil && name == "" {
			return true
		}
	}
	return false
}

func hasReadyEndpoint(s *discoveryv1.EndpointSlice) bool {
	for _, e := range s.Endpoints {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			return true
		}
	}
	return false
}
