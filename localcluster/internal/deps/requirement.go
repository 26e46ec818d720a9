package deps

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// RequiresAnnotation lists Services a pod needs on top of what its spec
// names: "<service>.<namespace>:<port>[,...]".
const RequiresAnnotation = "localcluster.wavecd.io/requires"

// Requirement is one Service a container needs, on one port or any.
type Requirement struct {
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	// Port is the Service's port; 0 means any port with a ready endpoint.
	Port int32 `json:"port,omitempty"`
	// Source says where the requirement comes from, for messages: "its
	// command", "its args", "env REDIS_URL", "annotation ...", "the profile".
	Source string `json:"source,omitempty"`
}

// Key is the Service's namespace/name.
func (r Requirement) Key() string { return r.Namespace + "/" + r.Service }

// String is "namespace/service:port", or "namespace/service" for any port.
func (r Requirement) String() string {
	if r.Port == 0 {
		return r.Key()
	}
	return fmt.Sprintf("%s:%d", r.Key(), r.Port)
}

// Describe says what is needed and where it comes from, as the crash
// message shows it: "Service default/redis:6379 (named in its command)".
func (r Requirement) Describe() string {
	if r.Source == "" {
		return "Service " + r.String()
	}
	return "Service " + r.String() + " (" + r.Source + ")"
}

// ParseRequires parses the value of the requires annotation (or a
// profile's requires list joined by commas): "<service>.<namespace>:<port>",
// where the host may also be written <service>.<namespace>.svc or
// <service>.<namespace>.svc.cluster.local. source is set on each.
func ParseRequires(value, source string) ([]Requirement, error) {
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("no entries: want <service>.<namespace>:<port>[,...]")
	}
	var out []Requirement
	for i, entry := range strings.Split(value, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("entry %d is empty", i+1)
		}
		r, err := parseRequirement(entry)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", entry, err)
		}
		r.Source = source
		out = append(out, r)
	}
	return out, nil
}

func parseRequirement(entry string) (Requirement, error) {
	host, portStr, ok := strings.Cut(entry, ":")
	if !ok {
		return Requirement{}, fmt.Errorf("no port: want <service>.<namespace>:<port>")
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return Requirement{}, fmt.Errorf("port %q is not a number from 1 to 65535", portStr)
	}
	host = strings.TrimSuffix(strings.TrimSuffix(host, ".cluster.local"), ".svc")
	svc, ns, ok := strings.Cut(host, ".")
	if !ok || strings.Contains(ns, ".") {
		return Requirement{}, fmt.Errorf("host %q: want <service>.<namespace>", host)
	}
	if msgs := validation.IsDNS1035Label(svc); len(msgs) > 0 {
		return Requirement{}, fmt.Errorf("service %q: %s", svc, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return Requirement{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(msgs, "; "))
	}
	return Requirement{Service: svc, Namespace: ns, Port: int32(port)}, nil
}
