package deploy_test

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavecd/wavecd/internal/cli"
	"github.com/wavecd/wavecd/internal/plugin"
)

// TestChartPluginSidecars checks the Config Management Plugin sidecars:
// the binary copied by an init container, each sidecar running `wavecd
// cmp-server` with flags the binary knows, its plugin.yaml mounted from a
// ConfigMap holding a valid ConfigManagementPlugin, and the socket folder
// shared with the controller's --plugins-dir.
func TestChartPluginSidecars(t *testing.T) {
	r := renderChart(t, readValues(t, "testdata/values-plugins.yaml"))
	pod := deployments(t, r)["wavecd-controller"].Spec.Template.Spec
	if len(pod.InitContainers) != 1 || !slices.Equal(pod.InitContainers[0].Args, []string{"cmp-server", "--copy-to=/var/run/wavecd/wavecd"}) {
		t.Fatalf("init containers = %+v, want one copying the binary", pod.InitContainers)
	}
	var names []string
	for _, c := range pod.Containers {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"controller", "kustomized-helm", "nix"}, names); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	if !slices.Contains(pod.Containers[0].Args, "--plugins-dir=/home/argocd/cmp-server/plugins") {
		t.Errorf("controller args %q lack --plugins-dir", pod.Containers[0].Args)
	}
	for _, c := range pod.Containers[1:] {
		t.Run(c.Name, func(t *testing.T) {
			if !slices.Equal(c.Command, []string{"/var/run/wavecd/wavecd", "cmp-server"}) {
				t.Errorf("command = %q", c.Command)
			}
			root := cli.NewRootCommand(cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
			sub, rest, err := root.Find(append(c.Command[1:], c.Args...))
			if err != nil || sub.Name() != "cmp-server" {
				t.Fatalf("sidecar runs %v: %v", sub, err)
			}
			if err := sub.ParseFlags(rest); err != nil {
				t.Fatalf("cmp-server flags: %v", err)
			}
			mounts := map[string]string{}
			for _, m := range c.VolumeMounts {
				mounts[m.MountPath] = m.Name
			}
			if mounts["/home/argocd/cmp-server/plugins"] != "plugins" || mounts["/var/run/wavecd"] != "wavecd-bin" || mounts["/home/argocd/cmp-server/config"] == "" {
				t.Errorf("mounts = %v", mounts)
			}
			vol := volume(pod.Volumes, mounts["/home/argocd/cmp-server/config"])
			if vol == nil || vol.ConfigMap == nil {
				t.Fatalf("config volume %q is not a ConfigMap", mounts["/home/argocd/cmp-server/config"])
			}
			if c.Name == "nix" {
				if vol.ConfigMap.Name != "nix-cmp-config" {
					t.Errorf("nix reads ConfigMap %s, want its own nix-cmp-config", vol.ConfigMap.Name)
				}
				return
			}
			var data string
			for _, cm := range r.byKind("ConfigMap") {
				if cm.GetName() == vol.ConfigMap.Name {
					data, _ = cm.Object["data"].(map[string]any)["plugin.yaml"].(string)
				}
			}
			cfgs, err := plugin.Parse("plugin.yaml", []byte(data))
			if err != nil || len(cfgs) != 1 || cfgs[0].Name() != "kustomized-helm" {
				t.Errorf("ConfigMap %s holds no valid plugin: %v %v", vol.ConfigMap.Name, cfgs, err)
			}
		})
	}
}

func volume(vols []corev1.Volume, name string) *corev1.Volume {
	for i := range vols {
		if vols[i].Name == name {
			return &vols[i]
		}
	}
	return nil
}

// TestKustomizePluginComponent builds the kustomize base with the
// plugin-sidecar component and a sidecar patch, and compares the
// controller's pod with what the chart renders for the same plugin.
func TestKustomizePluginComponent(t *testing.T) {
	compareKustomizeController(t, "kustomize-plugins",
		"controller: {plugins: [{name: kustomized-helm, image: alpine/k8s:1.31.0, config: x}]}")
}

// TestKustomizeShardingComponent builds the kustomize base with the
// sharding component and three replicas, and compares the controller
// with what the chart renders for controller.replicas: 3.
func TestKustomizeShardingComponent(t *testing.T) {
	compareKustomizeController(t, "kustomize-sharding", "controller: {replicas: 3}")
}

// compareKustomizeController builds the overlay testdata/dir and compares
// its controller Deployment's pod and replicas with the chart's for
// values.
func compareKustomizeController(t *testing.T, dir, values string) {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join("testdata", dir))
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	var fromKustomize *appsv1.Deployment
	for _, res := range resMap.Resources() {
		if res.GetKind() == "Deployment" && res.GetName() == "wavecd-controller" {
			m, err := res.Map()
			if err != nil {
				t.Fatal(err)
			}
			fromKustomize = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(jsonRoundTrip(t, m), fromKustomize); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fromKustomize == nil {
		t.Fatal("no controller Deployment")
	}
	r := renderChart(t, parseValues(t, values))
	chartDeploy := deployments(t, r)["wavecd-controller"]
	fromChart := chartDeploy.Spec.Template.Spec
	got := fromKustomize.Spec.Template.Spec
	for what, pair := range map[string][2]any{
		"replicas":        {chartDeploy.Spec.Replicas, fromKustomize.Spec.Replicas},
		"init containers": {fromChart.InitContainers, got.InitContainers},
		"containers":      {fromChart.Containers, got.Containers},
		"volumes":         {fromChart.Volumes, got.Volumes},
	} {
		if diff := cmp.Diff(pair[0], pair[1]); diff != "" {
			t.Errorf("%s (-chart +kustomize):\n%s", what, diff)
		}
	}
}
