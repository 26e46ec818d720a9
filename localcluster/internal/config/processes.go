package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Built-in process definitions: every cluster knows them, and the config
// file or --process can lay their own fields over them.
const (
	// KarpenterProcess runs Karpenter's KWOK provider (KarpenterBinary,
	// built from the localcluster/karpenter module).
	KarpenterProcess = "karpenter"
	// KarpenterBinary is the executable KarpenterProcess runs.
	KarpenterBinary = "karpenter-kwok"
	// TigeraOperatorProcess runs the Tigera operator (TigeraOperatorBinary,
	// built from the localcluster/tigera module), which creates Calico's
	// calico-node, typha and kube-controllers.
	TigeraOperatorProcess = "tigera-operator"
	// TigeraOperatorBinary is the executable TigeraOperatorProcess runs.
	TigeraOperatorBinary = "tigera-operator"
	// WavecdProcess runs the wavecd binary, for example `wavecd controller`
	// from a Helm chart's Deployment.
	WavecdProcess = "wavecd"
	// WavecdListenPort is the variable holding the free loopback port the
	// wavecd definition hands to --listen.
	WavecdListenPort = "WAVECD_LISTEN_PORT"
)

// Process is how a pod annotated localcluster.wavecd.io/process: NAME runs
// as a process on this machine.
type Process struct {
	// Command replaces the container's command: an executable (a path, or a
	// name looked up in PATH) and its first arguments. A relative path in a
	// config file is relative to that file.
	Command []string `json:"command,omitempty"`
	// Args come after the container's args, so a flag set here wins over
	// the same flag in the pod. $(VAR) expands as in a pod spec.
	Args []string `json:"args,omitempty"`
	// Env is set over the pod's environment.
	Env map[string]string `json:"env,omitempty"`
	// FreePorts are environment variables set to a free 127.0.0.1 port at
	// each start, for a process that would otherwise bind fixed ports.
	FreePorts []string `json:"freePorts,omitempty"`
	// Images back pods with this process when their first container runs
	// one of them: a repository (any tag, public.ecr.aws/karpenter/controller)
	// or a repository with its tag.
	Images []string `json:"images,omitempty"`
	// Supports, when set, is a semantic version constraint (">= 1.0.0-0")
	// on the tag of the image a pod runs: a pod whose tag is a version
	// outside it is not backed by the process but runs simulated, and an
	// event says so, with Unsupported.
	Supports string `json:"supports,omitempty"`
	// Unsupported says what happens to a pod whose image version the
	// process does not support, and what to do about it.
	Unsupported string `json:"unsupported,omitempty"`
	// Grants are RBAC rules bound to the pod's ServiceAccount while the
	// process runs: what the cloud behind the program does on a real
	// cluster (Karpenter's KWOK provider creates the Node objects that a
	// cloud's instances would register).
	Grants []rbacv1.PolicyRule `json:"grants,omitempty"`
}

// karpenterGrants let Karpenter's KWOK provider do what EC2 and the
// instances' kubelets do for Karpenter on EKS: create and remove the Node
// objects, keep the KWOK node classes that serve EC2NodeClasses (and their
// CRD), and note on the cluster's events what it stands in for.
var karpenterGrants = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{APIGroups: []string{"karpenter.kwok.sh"}, Resources: []string{"kwoknodeclasses", "kwoknodeclasses/status"}, Verbs: []string{"*"}},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "create"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// karpenterUnsupported is what a pod of a Karpenter before v1.0 gets.
const karpenterUnsupported = "Karpenter before v1.0 (its v1alpha5 Provisioner and v1beta1 NodePool APIs) has no KWOK provider " +
	"that this cluster runs: the pod runs simulated and provisions no node. Give the cluster nodes in the profile's " +
	"nodeGroups, or rehearse the repository on Karpenter's v1 API (NodePool, EC2NodeClass), whose KWOK provider runs here"

// BuiltinProcesses are the definitions every cluster has. locate turns a
// binary name into the command to run (a path next to wavecd-localcluster,
// or the bare name for a PATH lookup at start).
func BuiltinProcesses(locate func(binary string) string) map[string]Process {
	return map[string]Process{
		KarpenterProcess: {
			Command: []string{locate(KarpenterBinary)},
			// Out of a pod, Karpenter cannot tell its namespace, which
			// leader election needs (its chart runs two replicas): the
			// pod's. It binds its metrics and health ports on every
			// interface: free ports keep clusters and runs apart.
			Env:         map[string]string{"LEADER_ELECTION_NAMESPACE": "$(POD_NAMESPACE)"},
			FreePorts:   []string{"METRICS_PORT", "HEALTH_PROBE_PORT"},
			Supports:    ">= 1.0.0-0",
			Unsupported: karpenterUnsupported,
			Grants:      karpenterGrants,
		},
		TigeraOperatorProcess: {
			Command: []string{locate(TigeraOperatorBinary)},
			// Out of a pod, controller-runtime cannot tell the operator's
			// namespace, which leader election needs; one runs anyway.
			Args: []string{"-enable-leader-election=false"},
		},
		WavecdProcess: {
			Command:   []string{locate("wavecd")},
			Args:      []string{"--listen=127.0.0.1:$(" + WavecdListenPort + ")"},
			FreePorts: []string{WavecdListenPort},
		},
	}
}

// Overlay returns p with o laid over it: o's command and args replace p's
// when set, its env entries are added or replace p's, its free ports are
// added.
func (p Process) Overlay(o Process) Process {
	out := Process{Command: p.Command, Args: p.Args, FreePorts: slices.Clone(p.FreePorts),
		Supports: cmp.Or(o.Supports, p.Supports), Unsupported: cmp.Or(o.Unsupported, p.Unsupported),
		Grants: append(slices.Clone(p.Grants), o.Grants...)}
	if len(o.Command) > 0 {
		out.Command = o.Command
	}
	if len(o.Args) > 0 {
		out.Args = o.Args
	}
	if len(p.Env)+len(o.Env) > 0 {
		out.Env = maps.Clone(p.Env)
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		maps.Copy(out.Env, o.Env)
	}
	for _, name := range o.FreePorts {
		if !slices.Contains(out.FreePorts, name) {
			out.FreePorts = append(out.FreePorts, name)
		}
	}
	out.Images = slices.Clone(p.Images)
	for _, img := range o.Images {
		if !slices.Contains(out.Images, img) {
			out.Images = append(out.Images, img)
		}
	}
	return out
}

// ProcessForImage names the definition whose images include image, the
// first by name when several do.
func ProcessForImage(defs map[string]Process, image string) (string, bool) {
	repo, tagged := imageRef(image)
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		for _, want := range defs[name].Images {
			wantRepo, wantTagged := imageRef(want)
			if wantTagged == wantRepo && wantRepo == repo || wantTagged != wantRepo && wantTagged == tagged {
				return name, true
			}
		}
	}
	return "", false
}

// ImageVersion is the semantic version an image's tag names ("v1.15.0",
// "1.15.0" for public.ecr.aws/karpenter/controller:1.15.0@sha256:...), or
// "" when its tag is none (latest, a digest only).
func ImageVersion(image string) string {
	_, tagged := imageRef(image)
	i := strings.LastIndexByte(tagged, ':')
	if i < 0 || i < strings.LastIndexByte(tagged, '/') {
		return ""
	}
	tag := tagged[i+1:]
	if _, err := semver.NewVersion(tag); err != nil || !strings.Contains(tag, ".") {
		return ""
	}
	return tag
}

// Accepts reports whether the process stands for a pod running image:
// always, unless Supports is set and the image's tag is a version outside
// it. The error says why not.
func (p Process) Accepts(image string) error {
	v := ImageVersion(image)
	if p.Supports == "" || v == "" {
		return nil
	}
	c, err := semver.NewConstraint(p.Supports)
	if err != nil {
		return fmt.Errorf("supports %q: %w", p.Supports, err)
	}
	sv, err := semver.NewVersion(v)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err) // not reached: ImageVersion took it as a version
	}
	if c.Check(sv) {
		return nil
	}
	return fmt.Errorf("image %s is version %s, outside what the process supports (%s)", image, v, p.Supports)
}

// imageRef returns an image's repository and its repository:tag, with
// Docker Hub's implicit registry and library/ spelled out and any digest
// dropped: "redis:7" -> "docker.io/library/redis", "docker.io/library/redis:7".
func imageRef(image string) (repo, tagged string) {
	image, _, _ = strings.Cut(image, "@")
	repo, tag := image, ""
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		repo, tag = image[:i], image[i+1:]
	}
	first, _, hasSlash := strings.Cut(repo, "/")
	switch {
	case !hasSlash:
		repo = "docker.io/library/" + repo
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		repo = "docker.io/" + repo
	}
	if tag == "" {
		return repo, repo
	}
	return repo, repo + ":" + tag
}

// MergeProcesses lays each layer's definitions over the earlier ones, name
// by name: built-ins, then the config file, then --process flags.
func MergeProcesses(layers ...map[string]Process) map[string]Process {
	out := map[string]Process{}
	for _, layer := range layers {
		for name, p := range layer {
			out[name] = out[name].Overlay(p)
		}
	}
	return out
}

// ParseProcessFlag parses a --process value, NAME=COMMAND: a path (made
// absolute) or a name looked up in PATH when the process starts.
func ParseProcessFlag(v string) (string, Process, error) {
	name, cmd, ok := strings.Cut(v, "=")
	if !ok || cmd == "" {
		return "", Process{}, fmt.Errorf("--process %q: want NAME=COMMAND, for example karpenter=/path/to/karpenter-kwok", v)
	}
	if err := validateProcessName(name); err != nil {
		return "", Process{}, fmt.Errorf("--process %q: %w", v, err)
	}
	if strings.Contains(cmd, "/") {
		abs, err := filepath.Abs(cmd)
		if err != nil {
			return "", Process{}, fmt.Errorf("--process %q: %w", v, err)
		}
		cmd = abs
	}
	return name, Process{Command: []string{cmd}}, nil
}

// resolveCommands makes relative command paths relative to dir.
func (c *Config) resolveCommands(dir string) {
	for name, p := range c.Processes {
		if len(p.Command) > 0 && strings.Contains(p.Command[0], "/") && !filepath.IsAbs(p.Command[0]) {
			p.Command = slices.Clone(p.Command)
			p.Command[0] = filepath.Join(dir, p.Command[0])
			c.Processes[name] = p
		}
	}
}

var builtinNames = map[string]bool{KarpenterProcess: true, TigeraOperatorProcess: true, WavecdProcess: true}

func validateProcesses(m map[string]Process) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m)) {
		p, path := m[name], "processes."+name
		if err := validateProcessName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
		if len(p.Command) == 0 && !builtinNames[name] {
			errs = append(errs, fmt.Errorf("%s.command: required (the executable and its first arguments)", path))
		} else if len(p.Command) > 0 && p.Command[0] == "" {
			errs = append(errs, fmt.Errorf("%s.command[0]: empty executable", path))
		}
		for _, k := range slices.Sorted(maps.Keys(p.Env)) {
			if msgs := validation.IsEnvVarName(k); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s.env: %q: %s", path, k, strings.Join(msgs, "; ")))
			}
		}
		if p.Supports != "" {
			if _, err := semver.NewConstraint(p.Supports); err != nil {
				errs = append(errs, fmt.Errorf("%s.supports: %q is not a version constraint: %w", path, p.Supports, err))
			}
		}
		for i, img := range p.Images {
			if img == "" || strings.ContainsAny(img, " \t") {
				errs = append(errs, fmt.Errorf("%s.images[%d]: %q is not an image reference", path, i, img))
			}
		}
		for i, k := range p.FreePorts {
			if msgs := validation.IsEnvVarName(k); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s.freePorts[%d]: %q: %s", path, i, k, strings.Join(msgs, "; ")))
			} else if _, both := p.Env[k]; both {
				errs = append(errs, fmt.Errorf("%s.freePorts[%d]: %s is also set in env", path, i, k))
			}
		}
	}
	return errs
}

func validateProcessName(name string) error {
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return errors.New(strings.Join(append([]string{fmt.Sprintf("name %q is not a DNS label", name)}, msgs...), "; "))
	}
	return nil
}
