package ec2bridge

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
)

// Reasons of the EC2NodeClass's Ready condition.
const (
	ReasonServed        = "ServedByKWOKNodeClass"
	ReasonNotServed     = "KWOKNodeClassNotCreated"
	ReasonKWOKNotReady  = "KWOKNodeClassNotReady"
	controllerName      = "localcluster.ec2nodeclass"
	servedMessageFormat = "served by KWOKNodeClass %s in this local cluster: no EC2 API is called, the spec is not read"
)

// nodeClassController keeps, for each EC2NodeClass, a KWOKNodeClass of the
// same name (created when missing, owned by the EC2NodeClass and labelled
// ServedByLabel), and sets the EC2NodeClass's Ready condition from it.
type nodeClassController struct {
	kube   client.Client
	bridge *Bridge
}

func (c *nodeClassController) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named(controllerName).
		For(&EC2NodeClass{}).
		Owns(&v1alpha1.KWOKNodeClass{}).
		Complete(reconcile.AsReconciler(m.GetClient(), c))
}

func (c *nodeClassController) Reconcile(ctx context.Context, nc *EC2NodeClass) (reconcile.Result, error) {
	if !nc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // its KWOKNodeClass goes with it (owner reference)
	}
	stored := nc.DeepCopy()
	kc, err := c.kwokNodeClass(ctx, nc)
	conditions := nc.StatusConditions()
	switch {
	case apierrors.IsAlreadyExists(err):
		return reconcile.Result{Requeue: true}, nil // not in the cache yet
	case err != nil:
		conditions.SetFalse(status.ConditionReady, ReasonNotServed, fmt.Sprintf("KWOKNodeClass %s, which serves it in this local cluster: %v", nc.Name, err))
	case kc.StatusConditions().Get(status.ConditionReady).IsFalse():
		ready := kc.StatusConditions().Get(status.ConditionReady)
		conditions.SetFalse(status.ConditionReady, ReasonKWOKNotReady, fmt.Sprintf("KWOKNodeClass %s, which serves it in this local cluster, is not Ready: %s", kc.Name, ready.Message))
	default:
		conditions.SetTrueWithReason(status.ConditionReady, ReasonServed, fmt.Sprintf(servedMessageFormat, kc.Name))
	}
	if !equality.Semantic.DeepEqual(stored, nc) {
		// Optimistic lock: a JSON merge patch replaces the whole list.
		if perr := c.kube.Status().Patch(ctx, nc, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); perr != nil {
			if apierrors.IsConflict(perr) {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, client.IgnoreNotFound(perr)
		}
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if conditions.Get(status.ConditionReady).IsTrue() {
		if _, seen := c.bridge.logged.LoadOrStore(nc.Name, true); !seen {
			log.FromContext(ctx).Info(fmt.Sprintf("EC2NodeClass %s is served by KWOK node class %s", nc.Name, kc.Name))
			c.note(ctx, nc, kc.Name)
		}
	}
	return reconcile.Result{}, nil
}

// NotesComponent is the event source under which the local cluster says
// what stands in for what (a rehearsal's timeline prints these events).
const NotesComponent = "localcluster"

// note records, once per EC2NodeClass, an event saying that a KWOK node
// class serves it; a failure is only logged.
func (c *nodeClassController) note(ctx context.Context, nc *EC2NodeClass, kwok string) {
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: nc.Name + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{APIVersion: GroupVersion.String(), Kind: EC2NodeClassKind, Name: nc.Name, UID: nc.UID,
			ResourceVersion: nc.ResourceVersion},
		Reason: ReasonServed, Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: NotesComponent},
		Message:        fmt.Sprintf("served by KWOKNodeClass %s: Karpenter's KWOK provider launches its NodeClaims as simulated nodes; no EC2 API is called", kwok),
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := c.kube.Create(ctx, e); err != nil {
		log.FromContext(ctx).Error(err, "recording that a KWOK node class serves an EC2NodeClass", "EC2NodeClass", nc.Name)
	}
}

// kwokNodeClass returns the KWOKNodeClass named as nc, creating it when
// missing. One that exists without being the bridge's (a user's) serves nc
// as it is.
func (c *nodeClassController) kwokNodeClass(ctx context.Context, nc *EC2NodeClass) (*v1alpha1.KWOKNodeClass, error) {
	kc := &v1alpha1.KWOKNodeClass{}
	err := c.kube.Get(ctx, client.ObjectKey{Name: nc.Name}, kc)
	if !apierrors.IsNotFound(err) {
		return kc, err
	}
	kc = &v1alpha1.KWOKNodeClass{ObjectMeta: metav1.ObjectMeta{
		Name:   nc.Name,
		Labels: map[string]string{ServedByLabel: nc.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: GroupVersion.String(),
			Kind:       EC2NodeClassKind,
			Name:       nc.Name,
			UID:        nc.UID,
			Controller: ptr.To(true),
		}},
	}}
	if err := c.kube.Create(ctx, kc); err != nil {
		return nil, err
	}
	return kc, nil
}
