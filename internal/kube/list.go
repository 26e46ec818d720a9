package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// ListOptions configure ListTracked.
type ListOptions struct {
	// Kinds limits the listing to these kinds; every listable kind when
	// empty (less the excluded ones).
	Kinds []schema.GroupKind
	// Namespace limits namespaced kinds to one namespace; all when empty.
	Namespace string
}

// excluded are kinds that are never an application's (Argo CD's default
// resource exclusions, and kinds that only churn).
var excluded = map[schema.GroupKind]bool{
	{Kind: "Event"}:                                                             true,
	{Kind: "ComponentStatus"}:                                                   true,
	{Group: "events.k8s.io", Kind: "Event"}:                                     true,
	{Kind: "Endpoints"}:                                                         true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:                          true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                               true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:            true,
	{Group: "authorization.k8s.io", Kind: "LocalSubjectAccessReview"}:           true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:           true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: true,
}

// ListTracked returns the live objects that tracking says belong to the
// application: with label tracking the API server filters by label, with
// annotation tracking every object of the listed kinds is read and filtered.
func (c *Cluster) ListTracked(ctx context.Context, tracking Tracking, opts ListOptions) ([]*unstructured.Unstructured, error) {
	resources, err := c.listable(opts.Kinds)
	if err != nil {
		return nil, err
	}
	selector := ""
	if tracking.method() == TrackingLabel {
		selector = LabelInstance + "=" + tracking.AppName
	}
	var (
		mu  sync.Mutex
		out []*unstructured.Unstructured
	)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, r := range resources {
		g.Go(func() error {
			objs, err := c.listResource(ctx, r, opts.Namespace, selector)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, obj := range objs {
				if tracking.Tracks(obj) {
					out = append(out, obj)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(RefOf(a).String(), RefOf(b).String())
	})
	return out, nil
}

// apiResource is a listable resource and its kind.
type apiResource struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
}

// listable finds the preferred version of every listable resource, limited
// to kinds when given, leaving out the kinds no app manages (excluded).
func (c *Cluster) listable(kinds []schema.GroupKind) ([]apiResource, error) {
	return c.listableOf(kinds, excluded)
}

// listableOf is listable with skip as the kinds left out.
func (c *Cluster) listableOf(kinds []schema.GroupKind, skip map[schema.GroupKind]bool) ([]apiResource, error) {
	lists, err := c.discovery.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discover resources: %w", err)
	}
	var out []apiResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || skip[gk] ||
				(len(kinds) > 0 && !slices.Contains(kinds, gk)) {
				continue
			}
			out = append(out, apiResource{gvr: gv.WithResource(r.Name), gvk: gv.WithKind(r.Kind), namespaced: r.Namespaced})
		}
	}
	return out, nil
}

func (c *Cluster) listResource(ctx context.Context, r apiResource, namespace, selector string) ([]*unstructured.Unstructured, error) {
	ri := c.dynamic.Resource(r.gvr)
	var lister interface {
		List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
	} = ri
	if r.namespaced && namespace != "" {
		lister = ri.Namespace(namespace)
	}
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{LabelSelector: selector, Limit: 500}
	for {
		list, err := lister.List(ctx, opts)
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.gvr, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(r.gvk)
			out = append(out, obj)
		}
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}
