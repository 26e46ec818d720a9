package deploy_test

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wavecd/wavecd/internal/cli"
)

// deployments returns the rendered Deployments by name.
func deployments(t *testing.T, r rendered) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for _, u := range r.byKind("Deployment") {
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, d, true); err != nil {
			t.Fatalf("Deployment %s: %v", u.GetName(), err)
		}
		out[d.Name] = d
	}
	if len(out) == 0 {
		t.Fatal("no Deployment rendered")
	}
	return out
}

// renders are the two configurations most tests check.
func renders(t *testing.T) map[string]rendered {
	t.Helper()
	return map[string]rendered{
		"default":    renderChart(t, nil),
		"namespaced": renderChart(t, readValues(t, namespacedValues)),
	}
}

// TestChartFlagsKnownToBinary parses every container's arguments with the
// wavecd command tree itself: a flag the chart passes that the binary does
// not have fails here, not in a crash-looping pod.
func TestChartFlagsKnownToBinary(t *testing.T) {
	wantCommand := map[string]string{"wavecd-controller": "controller", "wavecd-server": "server"}
	for name, r := range renders(t) {
		for depName, dep := range deployments(t, r) {
			t.Run(name+"/"+depName, func(t *testing.T) {
				c := dep.Spec.Template.Spec.Containers[0]
				if len(c.Command) != 0 {
					t.Errorf("command = %q, want the image's entrypoint", c.Command)
				}
				args := expandArgs(t, c, releaseNamespace)
				root := cli.NewRootCommand(cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
				sub, rest, err := root.Find(args)
				if err != nil {
					t.Fatalf("wavecd %s: %v", strings.Join(args, " "), err)
				}
				if sub.Name() != wantCommand[depName] {
					t.Fatalf("args %q run `wavecd %s`, want `wavecd %s`", args, sub.CommandPath(), wantCommand[depName])
				}
				if err := sub.ParseFlags(rest); err != nil {
					t.Fatalf("wavecd %s: %v", strings.Join(args, " "), err)
				}
				if extra := sub.Flags().Args(); len(extra) > 0 {
					t.Errorf("wavecd %s: stray arguments %q", sub.Name(), extra)
				}
				if got := sub.Flags().Lookup("namespace").Value.String(); got != releaseNamespace {
					t.Errorf("--namespace = %q, want the release namespace %q", got, releaseNamespace)
				}
				want := ":" + strconv.Itoa(int(c.Ports[0].ContainerPort))
				if got := sub.Flags().Lookup("listen").Value.String(); got != want {
					t.Errorf("--listen = %q, want %q (the container port)", got, want)
				}
			})
		}
	}
}

// expandArgs expands $(VAR) in the container's args as the kubelet does,
// from its env: plain values, metadata.namespace through the downward
// API as podNamespace, and metadata.name as "pod-0". A reference to anything else fails the test.
func expandArgs(t *testing.T, c corev1.Container, podNamespace string) []string {
	t.Helper()
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = podNamespace
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			vars[e.Name] = "pod-0"
		}
	}
	out := make([]string, len(c.Args))
	for i, arg := range c.Args {
		out[i] = varRef.ReplaceAllStringFunc(arg, func(ref string) string {
			v, ok := vars[ref[2:len(ref)-1]]
			if !ok {
				t.Errorf("argument %q refers to %s, which the container's env does not set", arg, ref)
			}
			return v
		})
	}
	return out
}

var varRef = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)

// TestChartParamsBecomeFlags checks configs.params and the other values that
// turn into arguments.
func TestChartParamsBecomeFlags(t *testing.T) {
	r := renderChart(t, readValues(t, namespacedValues))
	deps := deployments(t, r)
	got := map[string][]string{
		"controller": deps["wavecd-controller"].Spec.Template.Spec.Containers[0].Args,
		"server":     deps["wavecd-server"].Spec.Template.Spec.Containers[0].Args,
	}
	want := map[string][]string{
		"controller": {"controller", "--namespace=$(POD_NAMESPACE)", "--listen=:8080", "--cache-dir=/var/cache/wavecd", "--plugins-dir=/home/argocd/cmp-server/plugins", "--workers=20", "--operation-processors=5",
			"--application-namespaces=team-*", "--sharding", "--shard-replicas=2", "--replica-id=$(POD_NAME)", "--verbose"},
		"server": {"server", "--namespace=$(POD_NAMESPACE)", "--listen=:8080", "--cache-dir=/var/cache/wavecd", "--application-namespaces=team-*", "--insecure"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.notes, "configs.params keys wavecd does not use (ignored): server.basehref.") {
		t.Errorf("NOTES.txt does not name the ignored configs.params key server.basehref:\n%s", r.notes)
	}
}

// TestChartPodSecurity: every pod runs as the image's non-root user with a
// read-only root file system, no privilege escalation and no capability,
// and gets a writable /tmp.
func TestChartPodSecurity(t *testing.T) {
	for name, r := range renders(t) {
		for depName, dep := range deployments(t, r) {
			t.Run(name+"/"+depName, func(t *testing.T) {
				spec := dep.Spec.Template.Spec
				psc := spec.SecurityContext
				if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
					t.Errorf("pod securityContext = %+v, want runAsNonRoot and runAsUser 65532", psc)
				}
				if spec.HostNetwork || spec.HostPID || spec.HostIPC {
					t.Error("pod shares a host namespace")
				}
				for _, v := range spec.Volumes {
					if v.HostPath != nil {
						t.Errorf("volume %s is a hostPath", v.Name)
					}
				}
				for _, c := range spec.Containers {
					checkContainerSecurity(t, c)
					checkWritableTmp(t, spec, c)
				}
			})
		}
	}
}

func checkContainerSecurity(t *testing.T, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("container %s has no securityContext", c.Name)
	}
	isTrue := func(b *bool) bool { return b != nil && *b }
	if !isTrue(sc.ReadOnlyRootFilesystem) || !isTrue(sc.RunAsNonRoot) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || isTrue(sc.Privileged) {
		t.Errorf("container %s securityContext = %+v, want a read-only root, non-root, no privilege escalation", c.Name, sc)
	}
	if sc.Capabilities == nil || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container %s capabilities = %+v, want drop [ALL] and no add", c.Name, sc.Capabilities)
	}
}

func checkWritableTmp(t *testing.T, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath != "/tmp" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil {
				return
			}
		}
	}
	t.Errorf("container %s has no emptyDir at /tmp", c.Name)
}

// TestChartControllerPod checks what the controller's pod gets from values:
// probes on /healthz and /readyz of its listen port, replicas, and the pod
// annotations a process-backed local cluster test will set.
func TestChartControllerPod(t *testing.T) {
	tests := map[string]struct {
		values          map[string]any
		wantReplicas    int32
		wantAnnotations map[string]string
		wantLabel       string
	}{
		"default": {wantReplicas: 1},
		"namespaced": {
			values:          readValues(t, namespacedValues),
			wantReplicas:    2,
			wantAnnotations: map[string]string{"localcluster.wavecd.io/process": "wavecd"},
			wantLabel:       "example.com/team",
		},
		"global annotations under the controller's": {
			values: parseValues(t, `
global: {podAnnotations: {a: global, b: global}}
controller: {podAnnotations: {b: controller}}
`),
			wantReplicas:    1,
			wantAnnotations: map[string]string{"a": "global", "b": "controller"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dep := deployments(t, renderChart(t, tc.values))["wavecd-controller"]
			if got := *dep.Spec.Replicas; got != tc.wantReplicas {
				t.Errorf("replicas = %d, want %d", got, tc.wantReplicas)
			}
			meta := dep.Spec.Template.ObjectMeta
			if diff := cmp.Diff(tc.wantAnnotations, meta.Annotations); diff != "" {
				t.Errorf("pod annotations (-want +got):\n%s", diff)
			}
			if tc.wantLabel != "" && meta.Labels[tc.wantLabel] == "" {
				t.Errorf("pod labels %v lack %s", meta.Labels, tc.wantLabel)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			probes := map[string]string{"liveness": c.LivenessProbe.HTTPGet.Path, "readiness": c.ReadinessProbe.HTTPGet.Path}
			if diff := cmp.Diff(map[string]string{"liveness": "/healthz", "readiness": "/readyz"}, probes); diff != "" {
				t.Errorf("probe paths (-want +got):\n%s", diff)
			}
			if p := c.LivenessProbe.HTTPGet.Port.String(); p != c.Ports[0].Name {
				t.Errorf("probe port %s, want the container port %s", p, c.Ports[0].Name)
			}
		})
	}
}

// TestChartSettings checks the Argo CD settings objects: names, the
// part-of label Argo CD looks for, the Lua check kept byte for byte, and
// the webhook secret under Argo CD's key.
func TestChartSettings(t *testing.T) {
	vals := readValues(t, namespacedValues)
	r := renderChart(t, vals)
	byName := map[string]map[string]any{}
	for _, d := range r.docs {
		if k := d.obj.GetKind(); k == "ConfigMap" || k == "Secret" {
			if got := d.obj.GetLabels()["app.kubernetes.io/part-of"]; got != "argocd" {
				t.Errorf("%s %s: part-of label %q, want argocd", k, d.obj.GetName(), got)
			}
			data, _ := d.obj.Object["data"].(map[string]any)
			byName[d.obj.GetName()] = data
		}
	}
	lua := vals["configs"].(map[string]any)["cm"].(map[string]any)["resource.customizations.health.argoproj.io_Application"]
	if got := byName["argocd-cm"]["resource.customizations.health.argoproj.io_Application"]; got != lua {
		t.Errorf("argocd-cm health check = %q, want the values' %q", got, lua)
	}
	secret := byName["argocd-secret"]
	want := map[string]any{"webhook.github.secret": "bm90LWEtcmVhbC1zZWNyZXQ=", "server.secretkey": "YWxzby1ub3QtcmVhbA=="}
	if diff := cmp.Diff(want, secret); diff != "" {
		t.Errorf("argocd-secret data (-want +got):\n%s", diff)
	}
	if _, ok := byName["argocd-rbac-cm"]; !ok {
		t.Error("no argocd-rbac-cm")
	}
}
