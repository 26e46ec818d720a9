// Package shard spreads Applications over controller replicas.
//
// Assign is the assignment function: consistent hashing with bounded
// loads. Each replica owns points on a hash ring; an app goes to the
// first replica clockwise from its own hash that has room, where room is
// Capacity: ceil(apps/replicas x 1.25). An app pinned to a shard (the
// wavecd.io/shard annotation, else its destination cluster Secret's
// `shard` key, as in Argo CD) goes to the replica of that index among the
// live replicas sorted by name, whatever its load; an index past the
// last replica is ignored and the app is hashed. When a replica joins or
// leaves, about 1/N of the apps move.
//
// Membership is one Lease per replica (Members): each replica renews its
// own, labelled wavecd.io/controller-replica, and a replica whose Lease
// was not renewed within its duration is gone. A Coordinator runs on
// every replica: it recomputes the assignment when the replicas or the
// apps change, stops the work of every app it loses before it says so,
// and takes up an app it gains only once every live replica has said it
// serves the same assignment (the hash each writes on its Lease). So no
// app is reconciled by two replicas at once, and a dead replica's apps
// move within the Lease duration and a tick.
//
// What it does not own: what reconciling an app means (internal/controller
// tells the Coordinator how to stop an app's work and to start it), leader
// election (the ApplicationSet and notifications controllers, and
// cluster-wide work, stay on the elected leader).
package shard
