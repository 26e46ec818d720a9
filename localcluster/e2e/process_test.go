package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const processConfig = `nodeGroups:
- name: general
  count: 1
processes:
  whoami:
    command: [/bin/sh, %q]
    args: [--from-definition]
    env: {OUT_DIR: %q, FROM_DEFINITION: "yes"}
  exiter:
    command: [/bin/sh, -c, 'echo "exiting with $CODE"; exit "$CODE"']
  sleeper:
    command: [%q]
    images: [example.com/sleeper]
    supports: ">= 1.0.0-0"
    unsupported: Sleepers before 1.0 sleep elsewhere.
    grants:
    - {apiGroups: [""], resources: [nodes], verbs: [get, list]}
`

// processCluster is a cluster whose whoami processes write to out.
type processCluster struct {
	*localCluster
	out, config string
}

// TestProcessBackedPods runs pods backed by host processes: what a process
// gets, how its pod mirrors it, and that it stops with its pod or cluster.
func TestProcessBackedPods(t *testing.T) {
	dir := t.TempDir()
	script, err := filepath.Abs("testdata/whoami.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := processCluster{out: filepath.Join(dir, "out")}
	if err := os.MkdirAll(c.out, 0o700); err != nil {
		t.Fatal(err)
	}
	c.config = filepath.Join(dir, "cluster.yaml")
	sleeper := filepath.Join(dir, "sleeper")
	for name, content := range map[string]string{sleeper: "#!/bin/sh\nexec sleep 600\n", sleeper + ".version": "v1.2.0\n"} {
		if err := os.WriteFile(name, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(c.config, []byte(fmt.Sprintf(processConfig, script, c.out, sleeper)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.localCluster = startClusterWith(t, filepath.Join(dir, "cluster"), "--config", c.config)
	t.Run("process gets the pod's env, args and ServiceAccount", func(t *testing.T) { testProcessIdentity(t, c) })
	t.Run("exits show as a kubelet shows them", func(t *testing.T) { testProcessExits(t, c) })
	t.Run("unknown process name cannot be created", func(t *testing.T) { testUnknownProcess(t, c) })
	t.Run("the cluster notes versions, grants and what it does not run", func(t *testing.T) { testProcessNotes(t, c) })
	t.Run("cluster stop stops the processes, a restart starts them", func(t *testing.T) { testProcessClusterStop(t, c) })
	t.Run("killed supervisor leaves no process", func(t *testing.T) { testProcessKilledSupervisor(t, c) })
}

func testProcessIdentity(t *testing.T, c processCluster) {
	ctx := t.Context()
	createNamespace(t, c.localCluster, "proc")
	createServiceAccount(t, c.localCluster, "proc", "robot", "")
	who := processPod("proc", "who", "whoami", corev1.RestartPolicyAlways)
	who.Spec.ServiceAccountName = "robot"
	who.Spec.Containers[0].Command = []string{"/replaced/by/the/definition"}
	who.Spec.Containers[0].Args = []string{"--from-pod", "$(GREETING)"}
	who.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "GREETING", Value: "hello"},
		{Name: "FROM_DEFINITION", Value: "overridden by the definition"},
		{Name: "MY_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "MY_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	if _, err := c.client.CoreV1().Pods("proc").Create(ctx, who, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pid := waitProcessReady(t, c.localCluster, "proc", "who", 0)
	files := c.waitFiles(t, "proc.who")
	if got, err := strconv.Atoi(strings.TrimSpace(files["pid"])); err != nil || got != pid {
		t.Errorf("the process wrote pid %q, the pod's container ID says %d", files["pid"], pid)
	}
	wantEnv := map[string]string{
		"POD_NAME": "who", "POD_NAMESPACE": "proc", "MY_NAME": "who", "MY_NAMESPACE": "proc",
		"GREETING": "hello", "FROM_DEFINITION": "yes", "OUT_DIR": c.out,
		"KUBECONFIG": filepath.Join(c.dir, "processes", "proc_who", "kubeconfig"),
	}
	env := parseEnv(files["env"])
	gotEnv := map[string]string{}
	for k := range wantEnv {
		gotEnv[k] = env[k]
	}
	if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
		t.Errorf("process environment (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("--from-pod\nhello\n--from-definition\n", files["args"]); diff != "" {
		t.Errorf("process arguments (-want +got):\n%s", diff)
	}
	var review struct {
		Status struct {
			UserInfo struct{ Username string } `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(files["review"]), &review); err != nil {
		t.Fatalf("SelfSubjectReview answer %q: %v", files["review"], err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:proc:robot"; got != want {
		t.Errorf("the process authenticated as %q, want %q", got, want)
	}
	assertPodGoesWithProcess(t, c.localCluster, "proc", "who", pid)
}

// assertPodGoesWithProcess deletes a pod: the process stops and, as with a
// kubelet, the pod object goes only once it has.
func assertPodGoesWithProcess(t *testing.T, c *localCluster, ns, name string, pid int) {
	t.Helper()
	ctx := t.Context()
	if !pidAlive(pid) {
		t.Fatalf("process %d of %s/%s is not running before the delete", pid, ns, name)
	}
	if err := c.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "pod "+name+" gone", func() (bool, error) {
		_, err := c.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	if pidAlive(pid) {
		t.Errorf("pod %s/%s is gone but its process %d still runs", ns, name, pid)
	}
	eventually(t, 10*time.Second, "process directory removed", func() (bool, error) {
		_, err := os.Stat(filepath.Join(c.dir, "processes", ns+"_"+name))
		return os.IsNotExist(err), err
	})
}

func testProcessExits(t *testing.T, c processCluster) {
	tests := map[string]struct {
		code     string
		restart  corev1.RestartPolicy
		phase    corev1.PodPhase // Running means crash-looping
		exitCode int32
		reason   string
	}{
		"failure restarts with back-off": {code: "3", restart: corev1.RestartPolicyAlways, phase: corev1.PodRunning, exitCode: 3, reason: "Error"},
		"Never: failure ends Failed":     {code: "4", restart: corev1.RestartPolicyNever, phase: corev1.PodFailed, exitCode: 4, reason: "Error"},
		"Never: exit 0 ends Succeeded":   {code: "0", restart: corev1.RestartPolicyNever, phase: corev1.PodSucceeded, exitCode: 0, reason: "Completed"},
		"OnFailure: exit 0 ends Succeeded": {code: "0", restart: corev1.RestartPolicyOnFailure, phase: corev1.PodSucceeded,
			exitCode: 0, reason: "Completed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			podName := "exit-" + strings.ToLower(string(tc.restart)) + "-" + tc.code
			p := processPod("default", podName, "exiter", tc.restart)
			p.Annotations["localcluster.wavecd.io/backoff"] = "1s"
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "CODE", Value: tc.code}}
			if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var got *corev1.Pod
			eventually(t, 30*time.Second, podName+" settled", func() (bool, error) {
				var err error
				if got, err = c.client.CoreV1().Pods("default").Get(ctx, podName, metav1.GetOptions{}); err != nil {
					return false, err
				}
				if tc.phase == corev1.PodRunning {
					return len(got.Status.ContainerStatuses) > 0 && got.Status.ContainerStatuses[0].RestartCount >= 2 &&
						got.Status.ContainerStatuses[0].State.Waiting != nil, nil
				}
				return got.Status.Phase == tc.phase, nil
			})
			assertExit(t, got, tc.phase, tc.exitCode, tc.reason)
			if tc.phase == corev1.PodRunning {
				log, err := os.ReadFile(filepath.Join(c.dir, "logs", "process-default_"+podName+".log"))
				if err != nil || strings.Count(string(log), "exiting with "+tc.code) < 2 {
					t.Errorf("log of two runs expected, got %q (%v)", log, err)
				}
			}
		})
	}
}

func assertExit(t *testing.T, p *corev1.Pod, phase corev1.PodPhase, code int32, reason string) {
	t.Helper()
	cs := p.Status.ContainerStatuses[0]
	term := cs.State.Terminated
	if phase == corev1.PodRunning {
		term = cs.LastTerminationState.Terminated
		if cs.State.Waiting.Reason != "CrashLoopBackOff" || p.Status.Phase != corev1.PodRunning || cs.Ready {
			t.Errorf("crash-looping pod: phase %s, waiting %+v, ready %v", p.Status.Phase, cs.State.Waiting, cs.Ready)
		}
	}
	if p.Status.Phase != phase || term == nil || term.ExitCode != code || term.Reason != reason ||
		!strings.HasPrefix(term.ContainerID, "process://") {
		t.Errorf("pod %s: phase %s, terminated %+v; want phase %s, exit code %d, reason %s, a process:// container ID",
			p.Name, p.Status.Phase, term, phase, code, reason)
	}
}

func testUnknownProcess(t *testing.T, c processCluster) {
	ctx := t.Context()
	p := processPod("default", "nope", "nope", corev1.RestartPolicyAlways)
	if _, err := c.client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `no process definition named "nope" (known: exiter, karpenter, sleeper, tigera-operator, wavecd, whoami)`
	eventually(t, 30*time.Second, "nope waiting with CreateContainerConfigError", func() (bool, error) {
		got, err := c.client.CoreV1().Pods("default").Get(ctx, "nope", metav1.GetOptions{})
		if err != nil || len(got.Status.ContainerStatuses) == 0 {
			return false, err
		}
		w := got.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError" && w.Message == want && got.Status.Phase == corev1.PodPending,
			fmt.Errorf("waiting %+v", w)
	})
}

func testProcessClusterStop(t *testing.T, c processCluster) {
	ctx := t.Context()
	if _, err := c.client.CoreV1().Pods("default").Create(ctx, processPod("default", "who", "whoami", corev1.RestartPolicyAlways),
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pid := waitProcessReady(t, c.localCluster, "default", "who", 0)
	cli(t, "stop", "--dir", c.dir)
	if pidAlive(pid) {
		t.Fatalf("process %d still runs after the cluster stopped", pid)
	}
	cli(t, "start", "--dir", c.dir, "--config", c.config, "--detach")
	c.client = clientFor(t, c.dir)
	restarted := waitProcessReady(t, c.localCluster, "default", "who", pid)
	p, err := c.client.CoreV1().Pods("default").Get(ctx, "who", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := p.Status.ContainerStatuses[0]
	if last := cs.LastTerminationState.Terminated; restarted == pid || cs.RestartCount != 1 || last == nil ||
		last.ContainerID != fmt.Sprintf("process://%d", pid) {
		t.Fatalf("after the restart: pid %d (was %d), restarts %d, last termination %+v; want a new process, one restart",
			restarted, pid, cs.RestartCount, last)
	}
}

func testProcessKilledSupervisor(t *testing.T, c processCluster) {
	p, err := c.client.CoreV1().Pods("default").Get(t.Context(), "who", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://"))
	if err != nil || !pidAlive(pid) {
		t.Fatalf("who's process %q is not running (%v)", p.Status.ContainerStatuses[0].ContainerID, err)
	}
	if err := syscall.Kill(readState(t, c.dir).SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "who's process gone with the supervisor", func() (bool, error) { return !pidAlive(pid), nil })
}

func processPod(ns, name, process string, restart corev1.RestartPolicy) *corev1.Pod {
	p := simplePod(name, map[string]string{"localcluster.wavecd.io/process": process}, restart)
	p.Namespace = ns
	return p
}

// waitProcessReady waits until the pod is Running and Ready with a process
// other than not (0: any) and returns the pid its container ID names.
func waitProcessReady(t *testing.T, c *localCluster, ns, name string, not int) int {
	t.Helper()
	pid := 0
	eventually(t, 30*time.Second, name+" Running and Ready", func() (bool, error) {
		p, err := c.client.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		id, ok := strings.CutPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://")
		ready, _ := podReady(p)
		if !ok || !ready || p.Status.Phase != corev1.PodRunning {
			return false, fmt.Errorf("phase %s, ready %v, container ID %q", p.Status.Phase, ready, id)
		}
		pid, err = strconv.Atoi(id)
		return err == nil && pid != not, err
	})
	return pid
}

// waitFiles waits for whoami's files of prefix and returns them by suffix.
func (c processCluster) waitFiles(t *testing.T, prefix string) map[string]string {
	t.Helper()
	files := map[string]string{}
	eventually(t, 30*time.Second, "whoami files of "+prefix, func() (bool, error) {
		for _, suffix := range []string{"env", "args", "review", "pid"} {
			b, err := os.ReadFile(filepath.Join(c.out, prefix+"."+suffix))
			if err != nil {
				return false, err
			}
			files[suffix] = string(b)
		}
		return true, nil
	})
	return files
}

func parseEnv(s string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

func pidAlive(pid int) bool { return pid > 0 && !isZombie(pid) }

func createNamespace(t *testing.T, c *localCluster, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createServiceAccount creates a ServiceAccount, bound to clusterRole
// cluster-wide unless that is empty.
func createServiceAccount(t *testing.T, c *localCluster, ns, name, clusterRole string) {
	t.Helper()
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if clusterRole == "" {
		return
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	if _, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testProcessNotes: a pod of a supported image version runs its process,
// bound to the definition's grants, and the cluster notes which program at
// which version stands for it; a pod of an older version runs simulated,
// and a note says why.
func testProcessNotes(t *testing.T, c processCluster) {
	ctx := t.Context()
	createNamespace(t, c.localCluster, "notes")
	for name, image := range map[string]string{"newer": "example.com/sleeper:v1.3.0", "older": "example.com/sleeper:v0.9.0"} {
		p := simplePod(name, nil, corev1.RestartPolicyAlways)
		p.Namespace, p.Spec.Containers[0].Image = "notes", image
		if _, err := c.client.CoreV1().Pods("notes").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitProcessReady(t, c.localCluster, "notes", "newer", 0)
	eventually(t, 30*time.Second, "older Running simulated", func() (bool, error) {
		p, err := c.client.CoreV1().Pods("notes").Get(ctx, "older", metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning {
			return false, err
		}
		return !strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://"), fmt.Errorf("container %s", p.Status.ContainerStatuses[0].ContainerID)
	})
	want := map[string][]string{
		"newer/ProcessStarted": {"runs as process sleeper (", "sleeper v1.2.0), output in ", "process-notes_newer.log"},
		"newer/ProcessVersion": {"image example.com/sleeper:v1.3.0 asks for sleeper v1.3.0; this cluster runs sleeper v1.2.0"},
		"older/ProcessNotRun":  {"not run as process sleeper: image example.com/sleeper:v0.9.0 is version v0.9.0, outside what the process supports (>= 1.0.0-0). Sleepers before 1.0 sleep elsewhere."},
	}
	eventually(t, 30*time.Second, "the cluster's notes", func() (bool, error) {
		events, err := c.client.CoreV1().Events("notes").List(ctx, metav1.ListOptions{FieldSelector: "source=localcluster"})
		if err != nil {
			return false, err
		}
		got := map[string]string{}
		for _, e := range events.Items {
			got[e.InvolvedObject.Name+"/"+e.Reason] = e.Message
		}
		for key, parts := range want {
			for _, part := range parts {
				if !strings.Contains(got[key], part) {
					return false, fmt.Errorf("%s: %q lacks %q", key, got[key], part)
				}
			}
		}
		return true, nil
	})
	crb, err := c.client.RbacV1().ClusterRoleBindings().Get(ctx, "localcluster:process:sleeper:notes:default", metav1.GetOptions{})
	if err != nil || crb.RoleRef.Name != "localcluster:process:sleeper" {
		t.Fatalf("the grant's binding: %v (%+v)", err, crb)
	}
}
