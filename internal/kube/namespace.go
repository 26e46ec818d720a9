package kube

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ListNamespace returns every object of every listable namespaced kind in
// namespace (less the kinds that are never an application's), read from
// the API server.
func (c *Cluster) ListNamespace(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	resources, err := c.listable(nil)
	if err != nil {
		return nil, err
	}
	var (
		mu  sync.Mutex
		out []*unstructured.Unstructured
	)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, r := range resources {
		if !r.namespaced {
			continue
		}
		g.Go(func() error {
			objs, err := c.listResource(ctx, r, namespace, "")
			mu.Lock()
			defer mu.Unlock()
			out = append(out, objs...)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sortByRef(out)
	return out, nil
}
