package kube

import (
	"context"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// admissionRules are the rules of every admission webhook and admission
// policy of the cluster; unreadable when some could not be listed.
type admissionRules struct {
	unreadable bool
	rules      []admissionv1.RuleWithOperations
	// anyMutatingPolicy: a MutatingAdmissionPolicy exists; their
	// matching is not read here, so any of them counts as a match.
	anyMutatingPolicy bool
}

var (
	validatingWebhooksGVR = admissionv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	mutatingWebhooksGVR   = admissionv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingPoliciesGVR = admissionv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	mutatingPoliciesGK    = schema.GroupKind{Group: admissionv1.GroupName, Kind: "MutatingAdmissionPolicy"}
	accessReviewsGVR      = authorizationv1.SchemeGroupVersion.WithResource("selfsubjectaccessreviews")
)

// admissionFree reports whether no webhook or policy matches the creation
// of resource: a match may refuse or change it in ways only the server
// knows. Selectors are not read: a rule that names the resource counts.
func (k *CreationCheck) admissionFree(ctx context.Context, resource schema.GroupVersionResource) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.admission == nil {
		k.admission = k.readAdmission(ctx)
	}
	a := k.admission
	if a.unreadable || a.anyMutatingPolicy {
		return false
	}
	return !slices.ContainsFunc(a.rules, func(r admissionv1.RuleWithOperations) bool { return ruleMatches(r, resource) })
}

func (k *CreationCheck) readAdmission(ctx context.Context) *admissionRules {
	a := &admissionRules{}
	var vw admissionv1.ValidatingWebhookConfigurationList
	var mw admissionv1.MutatingWebhookConfigurationList
	var vp admissionv1.ValidatingAdmissionPolicyList
	if k.list(ctx, validatingWebhooksGVR, "", &vw) != nil || k.list(ctx, mutatingWebhooksGVR, "", &mw) != nil ||
		k.list(ctx, validatingPoliciesGVR, "", &vp) != nil {
		return &admissionRules{unreadable: true}
	}
	for _, c := range vw.Items {
		for _, w := range c.Webhooks {
			a.rules = append(a.rules, w.Rules...)
		}
	}
	for _, c := range mw.Items {
		for _, w := range c.Webhooks {
			a.rules = append(a.rules, w.Rules...)
		}
	}
	for _, p := range vp.Items {
		if p.Spec.MatchConstraints == nil {
			continue
		}
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			a.rules = append(a.rules, r.RuleWithOperations)
		}
	}
	m, err := k.c.mapper.RESTMapping(mutatingPoliciesGK)
	if err == nil {
		list, err := k.c.dynamic.Resource(m.Resource).List(ctx, metav1.ListOptions{Limit: 1})
		a.unreadable = err != nil
		a.anyMutatingPolicy = err == nil && len(list.Items) > 0
	}
	return a
}

// ruleMatches reports whether r applies to creating resource, in any
// version (a webhook's matchPolicy Equivalent reaches other versions).
func ruleMatches(r admissionv1.RuleWithOperations, resource schema.GroupVersionResource) bool {
	op := slices.ContainsFunc(r.Operations, func(o admissionv1.OperationType) bool {
		return o == admissionv1.OperationAll || o == admissionv1.Create
	})
	group := slices.Contains(r.APIGroups, "*") || slices.Contains(r.APIGroups, resource.Group)
	res := slices.ContainsFunc(r.Resources, func(name string) bool {
		main, _, _ := strings.Cut(name, "/")
		return main == "*" || main == resource.Resource
	})
	return op && group && res
}

// scopeFree reports whether resource may be created in namespace ("" for
// a cluster-scoped one) with nothing but the schema to decide: the
// namespace exists, is active and has no ResourceQuota, and the caller is
// allowed to create the resource there.
func (k *CreationCheck) scopeFree(ctx context.Context, resource schema.GroupVersionResource, namespace string) bool {
	key := resource.String() + "|" + namespace
	k.mu.Lock()
	defer k.mu.Unlock()
	free, ok := k.scopes[key]
	if !ok {
		free = k.namespaceFree(ctx, namespace) && k.allowed(ctx, resource, namespace)
		k.scopes[key] = free
	}
	return free
}

func (k *CreationCheck) namespaceFree(ctx context.Context, namespace string) bool {
	if namespace == "" {
		return true
	}
	var ns corev1.Namespace
	u, err := k.c.GetOptional(ctx, Ref{GVK: corev1.SchemeGroupVersion.WithKind("Namespace"), Name: namespace})
	if err != nil || u == nil || runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ns) != nil {
		return false
	}
	if ns.Status.Phase != corev1.NamespaceActive || ns.DeletionTimestamp != nil {
		return false
	}
	var quotas corev1.ResourceQuotaList
	if k.list(ctx, corev1.SchemeGroupVersion.WithResource("resourcequotas"), namespace, &quotas) != nil {
		return false
	}
	return len(quotas.Items) == 0
}

// allowed asks the API server whether the caller may create resource in
// namespace (a SelfSubjectAccessReview).
func (k *CreationCheck) allowed(ctx context.Context, resource schema.GroupVersionResource, namespace string) bool {
	review := &authorizationv1.SelfSubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "SelfSubjectAccessReview"},
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "create", Group: resource.Group, Version: resource.Version, Resource: resource.Resource, Namespace: namespace,
		}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(review)
	if err != nil {
		return false
	}
	out, err := k.c.dynamic.Resource(accessReviewsGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return false
	}
	allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	return allowed
}

// list lists resource in namespace into out, a typed list.
func (k *CreationCheck) list(ctx context.Context, resource schema.GroupVersionResource, namespace string, out any) error {
	list, err := k.c.dynamic.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(list.UnstructuredContent(), out)
}
