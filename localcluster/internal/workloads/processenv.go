package workloads

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	podresource "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// Environment variables every process gets.
const (
	EnvKubeconfig   = "KUBECONFIG"
	EnvPodName      = "POD_NAME"
	EnvPodNamespace = "POD_NAMESPACE"
)

// hostEnv are the variables a process inherits from the workloads
// controller, so that it finds its tools and a home; nothing else leaks
// from the host.
var hostEnv = []string{"PATH", "HOME", "TMPDIR"}

// launch is the command line and environment of a pod's process.
type launch struct {
	argv []string
	env  map[string]string
}

// environ lists the environment as KEY=VALUE, sorted.
func (l launch) environ() []string {
	out := make([]string, 0, len(l.env))
	for _, k := range slices.Sorted(maps.Keys(l.env)) {
		out = append(out, k+"="+l.env[k])
	}
	return out
}

// valueSource reads the ConfigMap and Secret values a container's env
// refers to.
type valueSource interface {
	configMap(ctx context.Context, namespace, name string) (map[string]string, error)
	secret(ctx context.Context, namespace, name string) (map[string]string, error)
}

// launchInput is what a process launch is built from besides the pod.
type launchInput struct {
	def config.Process
	// host holds the inherited host variables (hostEnv).
	host map[string]string
	// fixed are set last: KUBECONFIG and the definition's free ports.
	fixed map[string]string
	// allocatable is the node's, for resourceFieldRef limits left unset.
	allocatable corev1.ResourceList
	values      valueSource
}

// buildLaunch derives a process's command line and environment from the
// pod's first container, as a kubelet would for a container: the
// definition's command replaces the container's; the container's args,
// then the definition's, follow. The environment is, each layer over the
// one before: inherited host variables, POD_NAME and POD_NAMESPACE, the
// container's envFrom and env, the definition's env, then fixed. $(VAR)
// expands in env values and args as in a pod spec. A config error (a
// missing ConfigMap key, an unsupported field) is returned as such: the
// container cannot be created.
func buildLaunch(ctx context.Context, p *corev1.Pod, in launchInput) (launch, error) {
	if len(p.Spec.Containers) == 0 {
		return launch{}, errors.New("pod has no containers")
	}
	c := &p.Spec.Containers[0]
	env := maps.Clone(in.host)
	if env == nil {
		env = map[string]string{}
	}
	env[EnvPodName], env[EnvPodNamespace] = p.Name, p.Namespace
	own, err := containerEnv(ctx, p, c, in)
	if err != nil {
		return launch{}, err
	}
	maps.Copy(env, own)
	defEnv := map[string]string{}
	for k, v := range in.def.Env {
		defEnv[k] = expansion.Expand(v, expansion.MappingFuncFor(env))
	}
	maps.Copy(env, defEnv)
	maps.Copy(env, in.fixed)
	expand := expansion.MappingFuncFor(env)
	argv := slices.Clone(in.def.Command)
	for _, a := range c.Args {
		argv = append(argv, expansion.Expand(a, expand))
	}
	for _, a := range in.def.Args {
		argv = append(argv, expansion.Expand(a, expand))
	}
	return launch{argv: argv, env: env}, nil
}

// containerEnv resolves a container's envFrom and env, in order, each
// value expanded against the variables before it.
func containerEnv(ctx context.Context, p *corev1.Pod, c *corev1.Container, in launchInput) (map[string]string, error) {
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		vals, err := envFromValues(ctx, p.Namespace, from, in.values)
		if err != nil {
			return nil, err
		}
		for k, v := range vals {
			env[from.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = expansion.Expand(e.Value, expansion.MappingFuncFor(env))
			continue
		}
		v, ok, err := valueFrom(ctx, p, c, e, in)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			env[e.Name] = v
		}
	}
	return env, nil
}

func envFromValues(ctx context.Context, ns string, from corev1.EnvFromSource, src valueSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		vals, err := src.configMap(ctx, ns, from.ConfigMapRef.Name)
		if err != nil && !isOptional(from.ConfigMapRef.Optional) {
			return nil, fmt.Errorf("envFrom configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		return vals, nil
	case from.SecretRef != nil:
		vals, err := src.secret(ctx, ns, from.SecretRef.Name)
		if err != nil && !isOptional(from.SecretRef.Optional) {
			return nil, fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
		}
		return vals, nil
	}
	return nil, nil
}

// valueFrom resolves one env entry's valueFrom; ok is false for an
// optional reference that does not resolve.
func valueFrom(ctx context.Context, p *corev1.Pod, c *corev1.Container, e corev1.EnvVar, in launchInput) (string, bool, error) {
	from := e.ValueFrom
	switch {
	case from.FieldRef != nil:
		v, err := podField(p, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := podresource.ExtractResourceValueByContainerNameAndNodeAllocatable(from.ResourceFieldRef, p, c.Name, in.allocatable)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		vals, err := in.values.configMap(ctx, p.Namespace, ref.Name)
		return keyValue(vals, err, "configmap", ref.Name, ref.Key, isOptional(ref.Optional))
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		vals, err := in.values.secret(ctx, p.Namespace, ref.Name)
		return keyValue(vals, err, "secret", ref.Name, ref.Key, isOptional(ref.Optional))
	}
	return "", false, errors.New("valueFrom names no source")
}

func keyValue(vals map[string]string, err error, kind, name, key string, optional bool) (string, bool, error) {
	if err != nil {
		if optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	v, ok := vals[key]
	if !ok && !optional {
		return "", false, fmt.Errorf("%s %q has no key %q", kind, name, key)
	}
	return v, ok, nil
}

func isOptional(b *bool) bool { return b != nil && *b }

// podField resolves a downward-API field path as the kubelet does.
func podField(p *corev1.Pod, path string) (string, error) {
	switch path {
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	case "status.podIP":
		return p.Status.PodIP, nil
	case "status.hostIP":
		return p.Status.HostIP, nil
	}
	v, err := fieldpath.ExtractFieldPathAsString(p, path)
	if err != nil {
		return "", fmt.Errorf("fieldRef %q: %w", path, err)
	}
	return v, nil
}
