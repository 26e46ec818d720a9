package shard

import (
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
)

// LoadFactor bounds a replica's load: Capacity is this times the mean.
const LoadFactor = 1.25

// pointsPerReplica is how many points each replica has on the ring: more
// points even out the arcs between them.
const pointsPerReplica = 128

// App is one app to assign.
type App struct {
	// Key names the app (namespace/name).
	Key string
	// Shard pins the app to the replica of that index among the sorted
	// live replicas; -1 (or an index past the last replica) hashes it.
	Shard int
}

// Capacity is the most apps a replica takes by hashing, for apps spread
// over replicas: ceil(apps/replicas x LoadFactor).
func Capacity(apps, replicas int) int {
	if replicas <= 0 {
		return 0
	}
	// ceil(apps x 5 / (replicas x 4)) in integers.
	return (apps*5 + replicas*4 - 1) / (replicas * 4)
}

// Assign returns the replica of each app, by key. Replica names are
// sorted first; with no replica, no app is assigned. The result depends
// only on the apps' keys and pins and the replicas' names, not on their
// order.
func Assign(apps []App, replicas []string) map[string]string {
	out := make(map[string]string, len(apps))
	if len(replicas) == 0 {
		return out
	}
	names := slices.Clone(replicas)
	slices.Sort(names)
	names = slices.Compact(names)
	load := make(map[string]int, len(names))
	hashed := make([]keyed, 0, len(apps))
	for _, a := range apps {
		if a.Shard >= 0 && a.Shard < len(names) {
			out[a.Key] = names[a.Shard]
			load[names[a.Shard]]++
			continue
		}
		hashed = append(hashed, keyed{hash: hashOf(a.Key), key: a.Key})
	}
	// A fixed order (by hash, then key) makes the result independent of
	// the order apps were given in.
	sort.Slice(hashed, func(i, j int) bool {
		if hashed[i].hash != hashed[j].hash {
			return hashed[i].hash < hashed[j].hash
		}
		return hashed[i].key < hashed[j].key
	})
	ring := newRing(names)
	limit := Capacity(len(apps), len(names))
	for _, a := range hashed {
		owner := ring.place(a.hash, func(r string) bool { return load[r] < limit })
		out[a.key] = owner
		load[owner]++
	}
	return out
}

type keyed struct {
	hash uint64
	key  string
}

// ring is the replicas' points, sorted by hash.
type ring []point

type point struct {
	hash    uint64
	replica string
}

func newRing(replicas []string) ring {
	r := make(ring, 0, len(replicas)*pointsPerReplica)
	for _, name := range replicas {
		for i := range pointsPerReplica {
			r = append(r, point{hash: hashOf(name + "#" + strconv.Itoa(i)), replica: name})
		}
	}
	sort.Slice(r, func(i, j int) bool {
		if r[i].hash != r[j].hash {
			return r[i].hash < r[j].hash
		}
		return r[i].replica < r[j].replica
	})
	return r
}

// place walks clockwise from h to the first replica that has room; when
// none has (every replica full, which Capacity rules out for hashed apps
// alone, but pinned apps can fill replicas), the first replica clockwise.
func (r ring) place(h uint64, room func(string) bool) string {
	start := sort.Search(len(r), func(i int) bool { return r[i].hash >= h })
	for i := range r {
		p := r[(start+i)%len(r)]
		if room(p.replica) {
			return p.replica
		}
	}
	return r[start%len(r)].replica
}

// hashOf is FNV-1a, finished with a 64-bit mixer so that keys that differ
// in their last characters land far apart.
func hashOf(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
