package workloads

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func TestIPPool(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, ip := range map[string]string{"a": "10.244.0.2", "host": "10.0.0.1"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "x"}, Status: corev1.PodStatus{PodIP: ip}}
		p.Spec.HostNetwork = name == "host"
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	pods := corelisters.NewPodLister(idx)
	pool := newIPPool()
	first := pool.allocate(pods)
	second := pool.allocate(pods)
	if first != "10.244.0.3" || second != "10.244.0.4" {
		t.Fatalf("allocated %s and %s, want 10.244.0.3 and 10.244.0.4 (10.244.0.2 is a pod's)", first, second)
	}
	pool.release(first)
	seen := map[string]bool{first: true}
	for range 300 {
		ip := pool.allocate(pods)
		if seen[ip] && ip != first {
			t.Fatalf("%s handed out twice", ip)
		}
		seen[ip] = true
	}
	if !seen["10.244.1.1"] || seen["10.244.1.0"] || seen["10.244.0.255"] {
		t.Errorf("addresses cross from 10.244.0.x to 10.244.1.x without .0 and .255: %v", seen["10.244.1.1"])
	}
}
