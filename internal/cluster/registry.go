package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
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

// Listing is the outcome of one List: the clusters, and the error that
// reported the Secrets left out. It answers lookups without listing again.
type Listing struct {
	All []Cluster
	Err error
}

// ByServer returns the cluster registered for the server URL (a trailing
// slash does not matter); several Secrets for one URL resolve to the first
// in List's order. An unknown URL wraps ErrNotFound.
func (r Registry) ByServer(ctx context.Context, server string) (*Cluster, error) {
	return r.listing(ctx).ByServer(server)
}

// ByName returns the cluster registered under name. An unknown name wraps
// ErrNotFound.
func (r Registry) ByName(ctx context.Context, name string) (*Cluster, error) {
	return r.listing(ctx).ByName(name)
}

// listing lists the clusters once, for several lookups.
func (r Registry) listing(ctx context.Context) Listing {
	all, err := r.List(ctx)
	return Listing{All: all, Err: err}
}

// ByServer is Registry.ByServer over the listing. The cluster returned is
// a copy.
func (l Listing) ByServer(server string) (*Cluster, error) {
	if l.All == nil && l.Err != nil {
		return nil, l.Err
	}
	want := strings.TrimRight(server, "/")
	for i := range l.All {
		if l.All[i].Server == want {
			c := l.All[i]
			return &c, nil
		}
	}
	return nil, notFound(fmt.Sprintf("no cluster is registered for server %s", server), l.Err)
}

// ByName is Registry.ByName over the listing. The cluster returned is a
// copy.
func (l Listing) ByName(name string) (*Cluster, error) {
	if l.All == nil && l.Err != nil {
		return nil, l.Err
	}
	for i := range l.All {
		if l.All[i].Name == name {
			c := l.All[i]
			return &c, nil
		}
	}
	return nil, notFound("there are no clusters with this name: "+name, l.Err)
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
	if err := checkDestination(dest); err != nil {
		return nil, err
	}
	return r.listing(ctx).Resolve(dest)
}

// Resolve is Registry.Resolve over the listing.
func (l Listing) Resolve(dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	if err := checkDestination(dest); err != nil {
		return nil, err
	}
	if dest.Server != "" {
		return l.ByServer(dest.Server)
	}
	return l.ByName(dest.Name)
}

// checkDestination refuses a destination that names both a server and a
// name, or neither.
func checkDestination(dest v1alpha1.ApplicationDestination) error {
	switch {
	case dest.Server != "" && dest.Name != "":
		return fmt.Errorf("application destination can't have both name and server defined: %s %s", dest.Name, dest.Server)
	case dest.Server == "" && dest.Name == "":
		return errors.New("application destination names no cluster: set server or name")
	}
	return nil
}

// FromObjects reads the cluster Secrets among objs, as a settings file
// holds them (stringData is merged into data, as the API server stores
// it), the way FromSecrets does. Other objects are left out.
func FromObjects(objs []*unstructured.Unstructured, withInCluster bool) ([]Cluster, error) {
	var secrets []corev1.Secret
	for _, o := range objs {
		var sec corev1.Secret
		if o.GetKind() != "Secret" || o.GroupVersionKind().Group != "" {
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &sec); err != nil {
			return nil, fmt.Errorf("decode Secret %s: %w", o.GetName(), err)
		}
		if !IsClusterSecret(&sec) {
			continue
		}
		sec.Data, sec.StringData = kube.SecretData(&sec), nil
		secrets = append(secrets, sec)
	}
	return FromSecrets(secrets, withInCluster)
}

// Static is a list of clusters read once, from a file: it lists itself.
type Static []Cluster

// List returns the clusters.
func (s Static) List(context.Context) ([]Cluster, error) { return s, nil }
