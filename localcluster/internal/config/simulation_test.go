package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLoadProfile(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.NodeGroups[0].CNIReady || Duration(c.NodeStartup, 0) != 5*time.Second {
		t.Errorf("node groups %+v, node start-up %v", c.NodeGroups, c.NodeStartup)
	}
	if diff := cmp.Diff([]string{"public.ecr.aws/karpenter/controller"}, c.Processes["karpenter"].Images); diff != "" {
		t.Errorf("karpenter images (-want +got):\n%s", diff)
	}
	exit := int32(1)
	want := []Workload{
		{Namespace: "calico-system", Selector: "k8s-app=calico-node", ReadyAfter: &metav1.Duration{Duration: 3 * time.Second}},
		{Name: "migrate", RunTime: &metav1.Duration{Duration: 20 * time.Second}, ExitCode: &exit},
		{Namespace: "app-b", Requires: []string{"redis.app-a:6379"}},
	}
	if diff := cmp.Diff(want, c.Workloads); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
	if ic := c.IngressController; ic == nil || len(ic.Addresses) != 2 || Duration(ic.Delay, 0) != 2*time.Second {
		t.Errorf("ingress controller %+v", ic)
	}
}

func TestLoadRejectsInvalidProfile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "bad-profile.yaml"))
	if err == nil {
		t.Fatal("Load succeeded, want errors")
	}
	for _, want := range []string{
		"nodeStartup: -1s is negative",
		`processes.karpenter.images[0]: "two words" is not an image reference`,
		"workloads[0]: set namespace, name or selector",
		`workloads[1].selector: "a in b" is not a label selector`,
		`workloads[1].requires: entry "redis": no port`,
		"workloads[1].exitCode: 300 is not from 0 to 255",
		"workloads[1].runTime: -2s is negative",
		`ingressController.addresses[0]: "not an address!" is neither an IP nor a host name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestTimeScale(t *testing.T) {
	tests := map[string]struct {
		scale   float64
		in      time.Duration
		want    time.Duration
		wantErr string
	}{
		"unset is real time":      {scale: 0, in: 180 * time.Second, want: 180 * time.Second},
		"a tenth":                 {scale: 0.1, in: 180 * time.Second, want: 18 * time.Second},
		"back-off base at 0.05":   {scale: 0.05, in: 10 * time.Second, want: 500 * time.Millisecond},
		"slower than real is ok":  {scale: 2, in: time.Second, want: 2 * time.Second},
		"negative is refused":     {scale: -1, wantErr: "time scale -1: want a factor above 0"},
		"far too slow is refused": {scale: 100, wantErr: "time scale 100"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Config{TimeScale: tc.scale}
			err := c.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Scale(tc.in); got != tc.want {
				t.Errorf("Scale(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestWorkloadMatches(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "calico-node-x7k2p", Namespace: "calico-system",
		Labels: map[string]string{"k8s-app": "calico-node"}}}
	tests := map[string]struct {
		w     Workload
		owner string
		want  bool
	}{
		"namespace and selector":       {w: Workload{Namespace: "calico-system", Selector: "k8s-app=calico-node"}, want: true},
		"owning workload's name":       {w: Workload{Name: "calico-node"}, owner: "calico-node", want: true},
		"the pod's own name":           {w: Workload{Name: "calico-node-x7k2p"}, want: true},
		"another namespace":            {w: Workload{Namespace: "kube-system", Name: "calico-node"}, owner: "calico-node"},
		"selector does not match":      {w: Workload{Selector: "k8s-app=calico-typha"}},
		"name of another workload":     {w: Workload{Name: "calico-typha"}, owner: "calico-node"},
		"selector that does not parse": {w: Workload{Selector: "a in b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.w.Matches(pod, tc.owner); got != tc.want {
				t.Errorf("Matches() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProcessForImage(t *testing.T) {
	defs := map[string]Process{
		"karpenter": {Images: []string{"public.ecr.aws/karpenter/controller"}},
		"pinned":    {Images: []string{"ghcr.io/acme/tool:1.2"}},
		"hub":       {Images: []string{"redis"}},
	}
	tests := map[string]struct {
		image string
		want  string
	}{
		"any tag of a repository":     {image: "public.ecr.aws/karpenter/controller:1.15.0", want: "karpenter"},
		"a digest":                    {image: "public.ecr.aws/karpenter/controller:1.15.0@sha256:abc", want: "karpenter"},
		"the pinned tag":              {image: "ghcr.io/acme/tool:1.2", want: "pinned"},
		"another tag of a pinned one": {image: "ghcr.io/acme/tool:1.3"},
		"Docker Hub spelled out":      {image: "docker.io/library/redis:7.4", want: "hub"},
		"a registry with a port":      {image: "localhost:5000/redis:7"},
		"no definition":               {image: "nginx"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _ := ProcessForImage(defs, tc.image)
			if got != tc.want {
				t.Errorf("ProcessForImage(%q) = %q, want %q", tc.image, got, tc.want)
			}
		})
	}
}
