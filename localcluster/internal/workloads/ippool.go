package workloads

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// ipPool hands out pod IPs in 10.244.0.0/16, in turn, skipping those of
// pods that hold them.
type ipPool struct {
	mu    sync.Mutex
	next  int
	taken map[string]bool
}

// podIPs is the size of the pod range (addresses .0.2 to .255.254).
const podIPs = 1<<16 - 3

func newIPPool() *ipPool { return &ipPool{} }

// allocate returns a free address; the first call learns the addresses of
// the pods that exist (a restarted controller).
func (p *ipPool) allocate(pods corelisters.PodLister) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taken == nil {
		p.taken = map[string]bool{}
		list, _ := pods.List(labels.Everything())
		for _, pod := range list {
			if !pod.Spec.HostNetwork && pod.Status.PodIP != "" {
				p.taken[pod.Status.PodIP] = true
			}
		}
	}
	for range podIPs {
		n := p.next%podIPs + 2
		p.next++
		ip := fmt.Sprintf("10.244.%d.%d", n/256, n%256)
		if !p.taken[ip] && n%256 != 0 && n%256 != 255 {
			p.taken[ip] = true
			return ip
		}
	}
	return "10.244.255.254" // every address taken: share the last
}

func (p *ipPool) release(ip string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.taken, ip)
}
