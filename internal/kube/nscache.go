package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NamespaceCache builds the cache a controller of one namespace keeps of
// its objects (byObject narrows some kinds), and a client that reads
// through it, unstructured objects too, and writes to the API server.
// Cached objects keep no managedFields. The cache and the client share a
// mapper that remembers the mappings it found (RememberMappings): each
// cached read asks whether its kind is namespaced.
func NamespaceCache(cfg *rest.Config, scheme *runtime.Scheme, namespace string, byObject map[client.Object]cache.ByObject) (cache.Cache, client.Client, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create HTTP client: %w", err)
	}
	mapper, err := RememberingMapperProvider(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("create REST mapper: %w", err)
	}
	c, err := cache.New(cfg, cache.Options{
		HTTPClient:        httpClient,
		Mapper:            mapper,
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject:          byObject,
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create cache: %w", err)
	}
	cached, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper, Scheme: scheme, Cache: &client.CacheOptions{Reader: c, Unstructured: true}})
	if err != nil {
		return nil, nil, fmt.Errorf("create client: %w", err)
	}
	return c, cached, nil
}

// RunWithCache starts c, waits until it has synced, then runs run until
// ctx ends, and stops the cache. A stop (ctx ending) is not an error, nor
// is a stop before the cache synced.
func RunWithCache(ctx context.Context, c cache.Cache, run func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	cacheErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		cacheErr <- c.Start(ctx)
	}()
	defer wg.Wait()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		if err := <-cacheErr; err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		return nil
	}
	err := run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
