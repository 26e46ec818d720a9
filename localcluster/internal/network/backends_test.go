package network

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestChooseBackend(t *testing.T) {
	var fixture struct {
		Cases map[string]struct {
			Port int32        `json:"port"`
			Pods []corev1.Pod `json:"pods"`
			Want string       `json:"want"`
			Why  string       `json:"why"`
		} `json:"cases"`
	}
	b, err := os.ReadFile("testdata/backends.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &fixture); err != nil {
		t.Fatal(err)
	}
	for name, tc := range fixture.Cases {
		t.Run(name, func(t *testing.T) {
			var pods []*corev1.Pod
			for i := range tc.Pods {
				tc.Pods[i].Namespace = "default"
				pods = append(pods, &tc.Pods[i])
			}
			p, why := choose(pods, tc.Port)
			got := ""
			if p != nil {
				got = p.Name
			}
			if got != tc.Want || why != tc.Why {
				t.Errorf("choose() = %q, %q; want %q, %q", got, why, tc.Want, tc.Why)
			}
		})
	}
}

func TestServingCertFromThePodsSecrets(t *testing.T) {
	caPEM, caKey := newTestCA(t, "webhook-ca", nil, nil)
	certPEM, keyPEM := newTestCA(t, "lbc.kube-system.svc", caPEM, caKey)
	secrets := map[string]map[string][]byte{
		"kube-system/webhook-tls": {"tls.crt": certPEM, "tls.key": keyPEM},
		"kube-system/other":       {"cert.pem": []byte("not a certificate"), "key.pem": keyPEM},
	}
	b := PodBackends{Secret: func(_ context.Context, ns, name string) (map[string][]byte, error) {
		if d, ok := secrets[ns+"/"+name]; ok {
			return d, nil
		}
		return nil, fmt.Errorf("secret %s/%s not found", ns, name)
	}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lbc", Namespace: "kube-system"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "missing"}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "other"}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "webhook-tls"}}},
		}}}},
	}}}
	if c := b.ServingCert(t.Context(), pod, "lbc.kube-system.svc"); c == nil || c.Leaf.Subject.CommonName != "lbc.kube-system.svc" {
		t.Errorf("ServingCert for the Service's name = %v, want the mounted certificate", c)
	}
	if c := b.ServingCert(t.Context(), pod, "other.kube-system.svc"); c != nil {
		t.Errorf("ServingCert for another name = %v, want none", c.Leaf.Subject)
	}
}
