package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// The identity wavecd uses in a registered cluster, like Argo CD's
// argocd-manager: a ServiceAccount with cluster-admin rights and a
// long-lived token.
const (
	managerNamespace   = "kube-system"
	managerName        = "wavecd-manager"
	managerRole        = "wavecd-manager-role"
	managerRoleBinding = "wavecd-manager-role-binding"
	managerToken       = "wavecd-manager-token"
)

// tokenWait bounds the wait for the token controller to fill the token.
const tokenWait = 30 * time.Second

// manager creates and removes wavecd's identity in a target cluster.
type manager struct {
	c client.Client
}

// newManager connects to the target cluster cfg points at.
func newManager(cfg *rest.Config) (manager, error) {
	scheme, err := v1alpha1.NewScheme()
	if err != nil {
		return manager{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return manager{}, err
	}
	return manager{c: c}, nil
}

// ensure creates the ClusterRole, its binding, the ServiceAccount and its
// token Secret (keeping those that exist) and returns the token once the
// cluster has issued it. Everything else is owned by the ClusterRole, so
// deleting it removes them all (see remove).
func (m manager) ensure(ctx context.Context) (string, error) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: managerRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
		},
	}
	if err := m.createOrGet(ctx, role); err != nil {
		return "", err
	}
	owner, err := ownerRef(role, m.c)
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: managerName, OwnerReferences: owner}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: managerRoleBinding, OwnerReferences: owner},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: managerNamespace, Name: managerName}},
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: managerNamespace, Name: managerToken, OwnerReferences: owner,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: managerName},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	for _, obj := range []client.Object{sa, binding, token} {
		if err := m.createOrGet(ctx, obj); err != nil {
			return "", err
		}
	}
	return m.waitToken(ctx)
}

func (m manager) createOrGet(ctx context.Context, obj client.Object) error {
	err := m.c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		err = m.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	if err != nil {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

func ownerRef(owner client.Object, c client.Client) ([]metav1.OwnerReference, error) {
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return nil, fmt.Errorf("owner reference: %w", err)
	}
	return []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)}, nil
}

// waitToken waits for the token controller to write the token.
func (m manager) waitToken(ctx context.Context) (string, error) {
	var token string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tokenWait, true, func(ctx context.Context) (bool, error) {
		s := &corev1.Secret{}
		if err := m.c.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerToken}, s); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		token = string(s.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for the token of ServiceAccount %s/%s: %w", managerNamespace, managerName, err)
	}
	return token, nil
}

// errNoManager says the cluster has no wavecd-manager to remove.
var errNoManager = errors.New("no " + managerRole + " ClusterRole: nothing to clean up")

// remove deletes the ClusterRole; the garbage collector then deletes what
// it owns (binding, ServiceAccount, token). One request does it all: the
// credentials in use are the manager's own, and lose their rights with
// the first object deleted.
func (m manager) remove(ctx context.Context) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerRole}}
	err := m.c.Delete(ctx, role, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsNotFound(err) {
		return errNoManager
	}
	if err != nil {
		return fmt.Errorf("delete ClusterRole %s: %w", managerRole, err)
	}
	return nil
}
