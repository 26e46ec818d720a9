package network

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodIPIndex indexes pods by their IP.
const PodIPIndex = "podIP"

// IndexPodIP is the index function of PodIPIndex.
func IndexPodIP(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Status.PodIP == "" {
		return nil, nil
	}
	return []string{p.Status.PodIP}, nil
}

// PodBackends finds the pod behind an address in an informer's cache
// (indexed by PodIPIndex) and reads its Secrets.
type PodBackends struct {
	Pods cache.Indexer
	// Secret returns a Secret's data.
	Secret func(ctx context.Context, namespace, name string) (map[string][]byte, error)
}

// Backend returns the pod that answers at ip:port, or why none does.
func (b PodBackends) Backend(ip string, port int32) (*corev1.Pod, string) {
	objs, err := b.Pods.ByIndex(PodIPIndex, ip)
	if err != nil {
		return nil, err.Error()
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return choose(pods, port)
}

// choose picks the pod that answers on port among the pods at one
// address (host-network pods share their node's): a Ready one that is not
// being deleted, one declaring the port first.
func choose(pods []*corev1.Pod, port int32) (*corev1.Pod, string) {
	var ready []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
			ready = append(ready, p)
		}
	}
	for _, p := range ready {
		if declares(p, port) {
			return p, ""
		}
	}
	if len(ready) > 0 {
		return ready[0], ""
	}
	if len(pods) == 0 {
		return nil, "no pod has this address"
	}
	return nil, fmt.Sprintf("pod %s/%s is not ready", pods[0].Namespace, pods[0].Name)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func declares(p *corev1.Pod, port int32) bool {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.ContainerPort == port {
				return true
			}
		}
	}
	return false
}

// keyPairs are the Secret keys a serving certificate and its key go by.
var keyPairs = [][2]string{{"tls.crt", "tls.key"}, {"cert.pem", "key.pem"}, {"server.crt", "server.key"}}

// ServingCert returns a certificate of pod p's Secrets (volumes and
// projected sources) valid for serverName, or nil when none is.
func (b PodBackends) ServingCert(ctx context.Context, p *corev1.Pod, serverName string) *tls.Certificate {
	for _, name := range secretVolumes(p) {
		data, err := b.Secret(ctx, p.Namespace, name)
		if err != nil {
			continue
		}
		if c := validPair(data, serverName); c != nil {
			return c
		}
	}
	return nil
}

// validPair returns the first key pair in data whose certificate is valid
// for serverName.
func validPair(data map[string][]byte, serverName string) *tls.Certificate {
	for _, kp := range keyPairs {
		cert, err := tls.X509KeyPair(data[kp[0]], data[kp[1]])
		if err != nil {
			continue
		}
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err == nil && leaf.VerifyHostname(serverName) == nil {
			cert.Leaf = leaf
			return &cert
		}
	}
	return nil
}

func secretVolumes(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			out = append(out, v.Secret.SecretName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					out = append(out, s.Secret.Name)
				}
			}
		}
	}
	return out
}
