package deps

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Services tells which Services count: those that exist, and those the
// cluster expects (rendered somewhere in a bootstrap, not created yet).
type Services interface {
	// Lookup reports whether the Service namespace/name exists or is
	// expected, and its ports when it exists.
	Lookup(namespace, name string) (ports []int32, ok bool)
}

// Infer returns the Services the container names in its command, args and
// env values, first mention first, one per Service. namespace is the pod's.
func Infer(namespace string, c *corev1.Container, svcs Services) []Requirement {
	in := &inference{namespace: namespace, svcs: svcs, seen: map[string]bool{}}
	for _, cmd := range commands(c.Command, c.Args) {
		in.command(cmd, 0)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			in.envVar(e.Name, e.Value, siblingPort(e.Name, env))
		}
	}
	return in.out
}

// inference collects the requirements of one container.
type inference struct {
	namespace string
	svcs      Services
	seen      map[string]bool
	out       []Requirement
}

// maxScriptDepth bounds nested scripts (sh -c "sh -c '...'").
const maxScriptDepth = 3

// command looks at one command's words: flags with host values, the
// arguments of connection tools, assignments, nested scripts.
func (in *inference) command(w []word, depth int) {
	for len(w) > 0 && isAssignment(w[0].text) {
		name, value, _ := strings.Cut(w[0].text, "=")
		in.envVar(name, value, 0)
		w = w[1:]
	}
	if len(w) == 0 {
		return
	}
	tool := connectionTools[program(w)]
	port := portFlag(w)
	for i := 1; i < len(w); i++ {
		t := w[i].text
		switch {
		case isScript(t):
			if depth < maxScriptDepth {
				for _, c := range scriptCommands(t) {
					in.command(tagged(c, w[i].from), depth+1)
				}
			}
		case isAssignment(t):
			name, value, _ := strings.Cut(t, "=")
			in.envVar(name, value, 0)
		case strings.HasPrefix(t, "-"):
			name, value, hasValue := strings.Cut(strings.TrimLeft(t, "-"), "=")
			hostFlag := isHostFlag(name)
			switch {
			case hasValue:
				in.candidate(value, hostFlag, port, w[i].from)
			case hostFlag && i+1 < len(w) && !strings.HasPrefix(w[i+1].text, "-"):
				in.candidate(w[i+1].text, true, port, w[i].from)
				i++
			case isPortFlag(name) && i+1 < len(w):
				i++ // its value is the port, read by portFlag
			}
		default:
			p := port
			if tool && i+1 < len(w) {
				if n := parsePort(w[i+1].text); n > 0 {
					p = n // nc host 6379
				}
			}
			in.candidate(t, tool, p, w[i].from)
		}
	}
}

// envVar looks at an env value (or a shell assignment): a list of
// addresses, each counted when the name says it holds one or the address
// is unambiguous.
func (in *inference) envVar(name, value string, port int32) {
	for _, v := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\n' }) {
		in.candidate(v, isHostEnv(name), port, "env "+name)
	}
}

// candidate adds the Service an address names, if it names one in a way
// a program would connect to. hostContext: the place takes a host (a host
// flag, a connection tool's argument, an address env var); port is the
// port given next to it, if any.
func (in *inference) candidate(text string, hostContext bool, port int32, from string) {
	for _, a := range parseAddresses(text) {
		ns, svc, qualified, ok := in.resolve(a.host)
		if !ok || !(qualified || a.port > 0 || a.scheme || hostContext) {
			continue
		}
		p := a.port
		if p == 0 {
			p = port
		}
		r := Requirement{Namespace: ns, Service: svc, Port: p, Source: source(from)}
		if ports, _ := in.svcs.Lookup(ns, svc); p > 0 && len(ports) > 0 && !containsPort(ports, p) {
			r.Port = 0 // not one of the Service's ports: any ready endpoint will do
		}
		if in.seen[r.Key()] {
			continue
		}
		in.seen[r.Key()] = true
		in.out = append(in.out, r)
	}
}

func source(from string) string {
	if strings.HasPrefix(from, "env ") {
		return "named in " + from
	}
	return "named in its " + from
}

// resolve maps a host name to a Service that exists or is expected:
// svc, svc.ns, svc.ns.svc[.cluster.local], and a StatefulSet pod's
// pod.svc, pod.svc.ns, pod.svc.ns.svc[.cluster.local]. qualified: the name
// carries its namespace or a Service domain.
func (in *inference) resolve(host string) (ns, svc string, qualified, ok bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if len(validation.IsDNS1123Label(l)) > 0 {
			return "", "", false, false
		}
	}
	n := len(labels)
	if n >= 3 && labels[n-2] == "cluster" && labels[n-1] == "local" {
		labels, n = labels[:n-2], n-2
	}
	var tries [][2]string // namespace, service
	switch {
	case n >= 3 && labels[n-1] == "svc" && n <= 4:
		tries = append(tries, [2]string{labels[n-2], labels[n-3]})
	case n == 1:
		tries = append(tries, [2]string{in.namespace, labels[0]})
	case n == 2:
		tries = append(tries, [2]string{labels[1], labels[0]}, [2]string{in.namespace, labels[1]})
	case n == 3:
		tries = append(tries, [2]string{labels[2], labels[1]})
	}
	for _, t := range tries {
		if _, found := in.svcs.Lookup(t[0], t[1]); found {
			return t[0], t[1], n > 1, true
		}
	}
	return "", "", false, false
}

// address is one host of a value: its port and whether a URL scheme
// introduced it.
type address struct {
	host   string
	port   int32
	scheme bool
}

// parseAddresses reads "host", "host:port", "scheme://user@host:port/path"
// and comma-separated lists of them.
func parseAddresses(text string) []address {
	var out []address
	for _, t := range strings.Split(text, ",") {
		var a address
		if i := strings.Index(t, "://"); i > 0 {
			a.scheme, t = true, t[i+3:]
		}
		if i := strings.IndexAny(t, "/?#"); i >= 0 {
			t = t[:i]
		}
		if i := strings.LastIndexByte(t, '@'); i >= 0 {
			t = t[i+1:]
		}
		if host, p, ok := strings.Cut(t, ":"); ok {
			if a.port = parsePort(p); a.port == 0 {
				continue // not host:port (a key:value, an IPv6 address)
			}
			t = host
		}
		if t == "" || strings.ContainsAny(t, "$={}[]") {
			continue
		}
		a.host = t
		out = append(out, a)
	}
	return out
}

// connectionTools take host names as plain arguments.
var connectionTools = map[string]bool{
	"nc": true, "ncat": true, "netcat": true, "nslookup": true, "dig": true, "host": true, "getent": true,
	"ping": true, "telnet": true, "curl": true, "wget": true, "wait-for-it": true, "wait-for-it.sh": true,
	"wait-for": true, "dockerize": true,
}

// hostWords mark flags and env vars that hold addresses.
var hostWords = []string{"host", "addr", "server", "url", "uri", "endpoint", "broker", "master", "sentinel", "upstream", "backend", "dsn"}

func isHostFlag(name string) bool {
	name = strings.ToLower(name)
	if name == "h" {
		return true
	}
	if strings.HasSuffix(name, "name") && name != "hostname" {
		return false // --server-name, --service-name: labels, not addresses
	}
	for _, w := range hostWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func isHostEnv(name string) bool {
	u := strings.ToUpper(name)
	if strings.HasSuffix(u, "_NAME") || strings.HasSuffix(u, "_ID") {
		return false
	}
	for _, w := range hostWords {
		if strings.Contains(u, strings.ToUpper(w)) {
			return true
		}
	}
	return false
}

func isPortFlag(name string) bool {
	return name == "p" || name == "P" || strings.EqualFold(name, "port")
}

// portFlag returns the value of a command's port flag (-p 6379,
// --port=6379), or 0.
func portFlag(w []word) int32 {
	for i := 1; i < len(w); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(w[i].text, "-"), "=")
		if !strings.HasPrefix(w[i].text, "-") || !isPortFlag(name) {
			continue
		}
		if !hasValue && i+1 < len(w) {
			value = w[i+1].text
		}
		if p := parsePort(value); p > 0 {
			return p
		}
	}
	return 0
}

// siblingPort is the port env var next to a host one: REDIS_PORT for
// REDIS_HOST.
func siblingPort(name string, env map[string]string) int32 {
	u := strings.ToUpper(name)
	for _, w := range []string{"HOSTNAME", "HOST", "ADDR", "SERVER"} {
		if strings.HasSuffix(u, w) {
			return parsePort(env[name[:len(name)-len(w)]+"PORT"])
		}
	}
	return 0
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && name != "" && len(validation.IsEnvVarName(name)) == 0 && !strings.HasPrefix(name, "-")
}

func parsePort(s string) int32 {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0
	}
	return int32(n)
}

func containsPort(ports []int32, p int32) bool {
	for _, q := range ports {
		if q == p {
			return true
		}
	}
	return false
}
