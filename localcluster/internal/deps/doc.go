// Package deps owns what a pod needs from the cluster's Services before
// its containers can work: the Services a container names in its command,
// args and env values, as a real process would connect to them, and the
// explicit requirements of the localcluster.wavecd.io/requires annotation
// and of the cluster's profile.
//
// A name counts only when it resolves to a Service that exists, or that
// the cluster is told to expect (one rendered somewhere in a bootstrap),
// and only in a place where a program takes an address: a qualified name
// (svc.ns, svc.ns.svc, svc.ns.svc.cluster.local, a StatefulSet pod's
// pod.svc...), a name with a port or a URL scheme, the value of a host
// flag (-h, --host, --server, --redis-addr, ...), an argument of a
// connection tool (nc, nslookup, curl, ...) or an env var whose name says
// it holds an address (REDIS_HOST, DATABASE_URL, ...). The port comes from
// the name (svc:6379), a port flag of the same command (-p 6379,
// --port=6379) or the sibling env var (REDIS_PORT for REDIS_HOST). So
// ordinary words, and a Service's name used as a label
// (OTEL_SERVICE_NAME=frontend), are not requirements.
//
// The package is pure: callers pass what the cluster holds. Whether a
// requirement is met (a ready endpoint) is the caller's business.
package deps
