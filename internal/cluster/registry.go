package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Registry reads the registered clusters of one namespace.
type Registry struct {
	// Reader reads Secrets: a cache or the API server.
	Reader client.Reader
	// Namespace holds the cluster Secrets (the controller's namespace).
	Namespace string
	// InClusterDisabled leaves the implicit in-cluster destination out, as
	// argocd-cm's `cluster.inClusterEnabled: "false"` does. A Secret for
	// the in-cluster URL is still listed.
	InClusterDisabled bool
}

// List returns every registered cluster: the in-cluster destination first
// (unless a Secret replaces it or it is disabled), then the Secrets' by
// name. A Secret that cannot be read is left out and reported in the
// returned error (a join of *SecretError) next to the others.
func (r Registry) List(ctx context.Context) ([]Cluster, error) {
	secrets := &corev1.SecretList{}
	err := r.Reader.List(ctx, secrets, client.InNamespace(r.Namespace), client.MatchingLabels{LabelSecretType: SecretTypeCluster})
	if err != nil {
		return nil, fmt.Errorf("list cluster Secrets in %s: %w", r.Namespace, err)
	}
	return FromSecrets(secrets.Items, !r.InClusterDisabled)
}

// FromSecrets reads cluster Secrets (pure) the way List does; withInCluster
// adds the implicit in-cluster destination unless a Secret names its URL.
func FromSecrets(secrets []corev1.Secret, withInCluster bool) ([]Cluster, error) {
	var out []Cluster
	var errs []error
	inClusterSecret := false
	for i := range secrets {
		c, err := FromSecret(&secrets[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inClusterSecret = inClusterSecret || c.Server == InClusterServer
		out = append(out, *c)
	}
	if withInCluster && !inClusterSecret {
		out = append(out, *InCluster())
	}
	slices.SortStableFunc(out, func(a, b Cluster) int {
		return cmp.Or(
			cmp.Compare(rank(a), rank(b)),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Server, b.Server),
			cmp.Compare(a.SecretName, b.SecretName))
	})
	return out, errors.Join(errs...)
}

func rank(c Cluster) int {
	if c.Server == InClusterServer {
		return 0
	}
	return 1
}

// ByServer returns the cluster registered for the server URL (a trailing
// slash does not matter); several Secrets for one URL resolve to the first
// in List's order. An unknown URL wraps ErrNotFound.
func (r Registry) ByServer(ctx context.Context, server string) (*Cluster, error) {
	all, err := r.List(ctx)
	if all == nil && err != nil {
		return nil, err
	}
	want := strings.TrimRight(server, "/")
	for i := range all {
		if all[i].Server == want {
			return &all[i], nil
		}
	}
	return nil, notFound(fmt.Sprintf("no cluster is registered for server %s", server), err)
}

// ByName returns the cluster registered under name. An unknown name wraps
// ErrNotFound.
func (r Registry) ByName(ctx context.Context, name string) (*Cluster, error) {
	all, err := r.List(ctx)
	if all == nil && err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Name == name {
			return &all[i], nil
		}
	}
	return nil, notFound("there are no clusters with this name: "+name, err)
}

// notFound wraps ErrNotFound, adding why some Secrets were left out: one
// of them may have been the cluster looked for.
func notFound(msg string, secretErrs error) error {
	if secretErrs != nil {
		return fmt.Errorf("%w: %s (unreadable cluster Secrets: %w)", ErrNotFound, msg, secretErrs)
	}
	return fmt.Errorf("%w: %s", ErrNotFound, msg)
}

// Resolve returns the cluster an Application destination names: by
// server, or by name. A destination naming both, or neither, is an error.
func (r Registry) Resolve(ctx context.Context, dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	switch {
	case dest.Server != "" && dest.Name != "":
		return nil, fmt.Errorf("application destination can't have both name and server defined: %s %s", dest.Name, dest.Server)
	case dest.Server != "":
		return r.ByServer(ctx, dest.Server)
	case dest.Name != "":
		return r.ByName(ctx, dest.Name)
	}
	return nil, errors.New("application destination names no cluster: set server or name")
}
