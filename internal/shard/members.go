package shard

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names on the replicas' Leases.
const (
	// LabelReplica marks a replica's Lease.
	LabelReplica = "wavecd.io/controller-replica"
	// AnnotationAssignment is the hash of the assignment the replica
	// serves.
	AnnotationAssignment = "wavecd.io/assignment"
	// AnnotationShard pins an Application to a shard (a replica index).
	AnnotationShard = "wavecd.io/shard"
	// leasePrefix starts the name of each replica's Lease.
	leasePrefix = "wavecd-controller-"
)

// FieldManager is the field manager a replica writes its apps' status
// as, so that their managedFields tell which replica wrote them.
func FieldManager(identity string) string { return "wavecd-controller." + identity }

// Replica is one live replica, as its Lease tells.
type Replica struct {
	// Name is the replica's identity.
	Name string
	// Assignment is the hash of the assignment it serves ("" before its
	// first).
	Assignment string
	// Renewed is when it last renewed its Lease.
	Renewed time.Time
}

// Members keeps this replica's Lease and reads the others'.
type Members struct {
	// Client writes the Lease; Reader lists the replicas' Leases (a cache
	// of Leases labelled LabelReplica will do).
	Client    client.Client
	Reader    client.Reader
	Namespace string
	// Identity names this replica (unique among replicas).
	Identity string
	// Duration is how long a Lease lasts unrenewed.
	Duration time.Duration
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// LeaseName is the name of a replica's Lease.
func LeaseName(identity string) string {
	name := leasePrefix + strings.Trim(notDNS.ReplaceAllString(strings.ToLower(identity), "-"), "-")
	return strings.TrimRight(name[:min(len(name), 63)], "-")
}

// Renew writes this replica's Lease, renewed now, with the assignment
// hash it serves.
func (m Members) Renew(ctx context.Context, assignment string, now time.Time) error {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: m.Namespace, Name: LeaseName(m.Identity)}
	err := m.Client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		m.fill(lease, assignment, now)
		if err := m.Client.Create(ctx, lease); err != nil {
			return fmt.Errorf("create lease %s: %w", key.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read lease %s: %w", key.Name, err)
	}
	m.fill(lease, assignment, now)
	if err := m.Client.Update(ctx, lease); err != nil {
		return fmt.Errorf("renew lease %s: %w", key.Name, err)
	}
	return nil
}

func (m Members) fill(lease *coordinationv1.Lease, assignment string, now time.Time) {
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	lease.Labels[LabelReplica] = "true"
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[AnnotationAssignment] = assignment
	id := m.Identity
	secs := int32(m.Duration / time.Second)
	renewed := metav1.NewMicroTime(now)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &id, &secs, &renewed
	if lease.Spec.AcquireTime == nil {
		lease.Spec.AcquireTime = &renewed
	}
}

// Release deletes this replica's Lease, so that the others take its apps
// at once instead of when it expires.
func (m Members) Release(ctx context.Context) error {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: LeaseName(m.Identity)}}
	if err := m.Client.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("release lease %s: %w", lease.Name, err)
	}
	return nil
}

// Live lists the replicas whose Lease has not expired at now, sorted by
// name.
func (m Members) Live(ctx context.Context, now time.Time) ([]Replica, error) {
	return LiveReplicas(ctx, m.Reader, m.Namespace, now)
}

// LiveReplicas lists the replicas of namespace whose Lease has not
// expired at now, sorted by name.
func LiveReplicas(ctx context.Context, reader client.Reader, namespace string, now time.Time) ([]Replica, error) {
	var leases coordinationv1.LeaseList
	if err := reader.List(ctx, &leases, client.InNamespace(namespace), client.HasLabels{LabelReplica}); err != nil {
		return nil, fmt.Errorf("list controller replicas: %w", err)
	}
	var out []Replica
	for _, l := range leases.Items {
		s := l.Spec
		if s.HolderIdentity == nil || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
			continue
		}
		if now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)) {
			continue
		}
		out = append(out, Replica{Name: *s.HolderIdentity, Assignment: l.Annotations[AnnotationAssignment], Renewed: s.RenewTime.Time})
	}
	sortReplicas(out)
	return out, nil
}
