package network

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
