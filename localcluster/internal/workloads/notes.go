package workloads

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// NotesComponent is the source of the events in which the cluster says
// what it stands in for: which process runs a pod and at which version,
// or why none does. A rehearsal's timeline prints them.
const NotesComponent = "localcluster"

// Reasons of the notes.
const (
	// ReasonProcessStarted: the pod runs as a process on this machine.
	ReasonProcessStarted = "ProcessStarted"
	// ReasonProcessVersion: the process is another version than the
	// image's.
	ReasonProcessVersion = "ProcessVersion"
	// ReasonProcessNotRun: the image matches a process that does not
	// support its version; the pod runs simulated.
	ReasonProcessNotRun = "ProcessNotRun"
)

// VersionSuffix names the file beside a built program that holds the
// version it was built at (karpenter-kwok.version), as the operators'
// build scripts write it.
const VersionSuffix = ".version"

// recorders are the controllers' two voices: the kubelet's events on pods,
// and the cluster's notes.
type recorders struct {
	kubelet, notes record.EventRecorder
}

// noteUnsupported says, on admitting pod p, that its image matches a
// process definition that does not support its version.
func (c *podController) noteUnsupported(p *corev1.Pod) {
	if len(p.Spec.Containers) == 0 || c.notes == nil {
		return
	}
	image := p.Spec.Containers[0].Image
	name, ok := config.ProcessForImage(c.procs, image)
	if !ok {
		return
	}
	def := c.procs[name]
	if err := def.Accepts(image); err != nil {
		msg := fmt.Sprintf("not run as process %s: %v", name, err)
		if def.Unsupported != "" {
			msg += ". " + def.Unsupported
		}
		c.notes.Event(p, corev1.EventTypeWarning, ReasonProcessNotRun, msg)
		c.log.Warn("pod not backed by its process", "pod", p.Namespace+"/"+p.Name, "process", name, "err", err)
	}
}

// builtVersion is the version beside program (program.version), "" when
// none is there.
func builtVersion(program string) string {
	b, err := os.ReadFile(program + VersionSuffix)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// noteStarted says which process runs pod p, where its output goes, and,
// when the program is another version than the pod's image, that too.
func (c *processController) noteStarted(p *corev1.Pod, name string, argv []string, restart bool) {
	if c.notes == nil || restart {
		return
	}
	program := argv[0]
	built := builtVersion(program)
	msg := fmt.Sprintf("runs as process %s (%s", name, program)
	if built != "" {
		msg += " " + built
	}
	c.notes.Event(p, corev1.EventTypeNormal, ReasonProcessStarted, msg+"), output in "+c.logPath(p.Namespace, p.Name))
	image := p.Spec.Containers[0].Image
	if want := config.ImageVersion(image); built != "" && want != "" && strings.TrimPrefix(want, "v") != strings.TrimPrefix(built, "v") {
		c.notes.Event(p, corev1.EventTypeNormal, ReasonProcessVersion, fmt.Sprintf(
			"image %s asks for %s %s; this cluster runs %s %s, the version it has built", image, name, want, name, built))
	}
}

// grant binds the definition's grants to pod p's ServiceAccount: a
// ClusterRole per process (localcluster:process:NAME) and a binding per
// ServiceAccount, kept while the cluster lives.
func (c *processController) grant(ctx context.Context, p *corev1.Pod, name string, rules []rbacv1.PolicyRule) error {
	if len(rules) == 0 {
		return nil
	}
	role := "localcluster:process:" + name
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}
	if _, err := c.client.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = c.client.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("grant process %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("grant process %s: %w", name, err)
	}
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + ":" + p.Namespace + ":" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: p.Namespace, Name: sa}},
	}
	if _, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("grant process %s to %s/%s: %w", name, p.Namespace, sa, err)
	}
	return nil
}
