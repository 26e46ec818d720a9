package cluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// fargatePolicy names the MutatingAdmissionPolicy (and its binding) that
// hands the pods of the Fargate profiles to config.FargateScheduler, as
// EKS's own admission does.
const fargatePolicy = "localcluster-fargate-profiles"

// schedulerConfig is the kube-scheduler's configuration: without Fargate
// groups, the defaults; with them, a default-scheduler that never places a
// pod on their nodes, and a fargate-scheduler that places pods only there.
func schedulerConfig(kubeconfig string, fargate bool) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{"kubeconfig": kubeconfig},
		"leaderElection":   map[string]any{"leaderElect": false},
	}
	if fargate {
		cfg["profiles"] = []any{
			schedulerProfile("default-scheduler", "DoesNotExist"),
			schedulerProfile(config.FargateScheduler, "In", config.FargateScheduler),
		}
	}
	return yaml.Marshal(cfg)
}

// schedulerProfile is a profile whose pods may only go to nodes whose
// scheduler label satisfies op (and values).
func schedulerProfile(name, op string, values ...string) map[string]any {
	expr := map[string]any{"key": config.SchedulerLabel, "operator": op}
	if len(values) > 0 {
		expr["values"] = values
	}
	return map[string]any{
		"schedulerName": name,
		"pluginConfig": []any{map[string]any{
			"name": "NodeAffinity",
			"args": map[string]any{"addedAffinity": map[string]any{
				"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
					"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{expr}}},
				},
			}},
		}},
	}
}

// writeSchedulerConfig writes the scheduler's configuration file.
func writeSchedulerConfig(l Layout, c config.Config) error {
	b, err := schedulerConfig(l.Kubeconfig(), len(c.FargateSelectors()) > 0)
	if err != nil {
		return fmt.Errorf("scheduler configuration: %w", err)
	}
	if err := os.WriteFile(l.SchedulerConfig(), b, 0o600); err != nil {
		return fmt.Errorf("write scheduler configuration: %w", err)
	}
	return nil
}

// fargateMatch is the CEL condition a pod of the selectors meets: created
// in a selector's namespace with its labels, not by a DaemonSet (Fargate
// runs none), and not asking for another scheduler or for EC2.
func fargateMatch(selectors []config.FargateSelector) string {
	var alts []string
	for _, s := range selectors {
		terms := []string{"request.namespace == " + strconv.Quote(s.Namespace)}
		keys := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			terms = append(terms, fmt.Sprintf("object.metadata.?labels[%s].orValue('') == %s", strconv.Quote(k), strconv.Quote(s.Labels[k])))
		}
		alts = append(alts, "("+strings.Join(terms, " && ")+")")
	}
	return "(" + strings.Join(alts, " || ") + ")" +
		" && object.spec.?schedulerName.orValue('default-scheduler') == 'default-scheduler'" +
		" && object.metadata.?annotations[" + strconv.Quote(config.ComputeTypeKey) + "].orValue('') != 'ec2'" +
		" && !object.metadata.?ownerReferences.orValue([]).exists(r, r.kind == 'DaemonSet')"
}

// fargateToleration is the JSON patch that adds the toleration of the
// Fargate taint to a pod's tolerations.
var fargateToleration = func() string {
	t := fmt.Sprintf("Object.spec.tolerations{key: %q, operator: \"Equal\", value: \"fargate\", effect: \"NoSchedule\"}", config.ComputeTypeKey)
	return "has(object.spec.tolerations) ? " +
		"[JSONPatch{op: \"add\", path: \"/spec/tolerations/-\", value: " + t + "}] : " +
		"[JSONPatch{op: \"add\", path: \"/spec/tolerations\", value: [" + t + "]}]"
}()

// ensureFargatePolicy makes the pods the Fargate profiles select ask for
// config.FargateScheduler, tolerating the Fargate taint, when created; without profiles, it removes the
// policy an earlier start made.
func ensureFargatePolicy(ctx context.Context, c kubernetes.Interface, selectors []config.FargateSelector) error {
	policies, bindings := c.AdmissionregistrationV1().MutatingAdmissionPolicies(), c.AdmissionregistrationV1().MutatingAdmissionPolicyBindings()
	if len(selectors) == 0 {
		if err := bindings.Delete(ctx, fargatePolicy, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove fargate profiles: %w", err)
		}
		if err := policies.Delete(ctx, fargatePolicy, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove fargate profiles: %w", err)
		}
		return nil
	}
	policy := &admissionv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: fargatePolicy},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "fargate-profile", Expression: fargateMatch(append(slices.Clip(selectors), fargateProbe))}},
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: "Object{spec: Object.spec{schedulerName: " +
					strconv.Quote(config.FargateScheduler) + "}}"},
			}, {
				// EKS's fargate-scheduler places the pod whatever the
				// Fargate taint says; the scheduler here honours taints.
				PatchType: admissionv1.PatchTypeJSONPatch,
				JSONPatch: &admissionv1.JSONPatch{Expression: fargateToleration},
			}},
			FailurePolicy:      ptr.To(admissionv1.Fail),
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := &admissionv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fargatePolicy},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: fargatePolicy},
	}
	if err := upsert(ctx, policy, policies.Create, policies.Get, policies.Update); err != nil {
		return fmt.Errorf("fargate profiles: %w", err)
	}
	if err := upsert(ctx, binding, bindings.Create, bindings.Get, bindings.Update); err != nil {
		return fmt.Errorf("fargate profiles: %w", err)
	}
	return nil
}

// fargateProbe is a selector no workload's pod meets: a dry run of a pod
// that does tells whether the API server applies the policy yet
// (fargatePolicyActive).
var fargateProbe = config.FargateSelector{Namespace: "kube-system", Labels: map[string]string{"localcluster.wavecd.io/fargate-probe": "true"}}

// fargatePolicyActive reports whether the API server hands the pods of the
// Fargate profiles to config.FargateScheduler yet: it loads a new policy
// in the background, and a pod created before that would go to the
// default scheduler, which never places it.
func fargatePolicyActive(c kubernetes.Interface) func(context.Context) (bool, error) {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "fargate-probe-", Namespace: fargateProbe.Namespace, Labels: fargateProbe.Labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
	return func(ctx context.Context) (bool, error) {
		got, err := c.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		if got.Spec.SchedulerName != config.FargateScheduler {
			return false, fmt.Errorf("a probe pod of the Fargate profiles asks for scheduler %q", got.Spec.SchedulerName)
		}
		return true, nil
	}
}

// upsert creates obj, or replaces the existing one's spec.
func upsert[T interface {
	metav1.Object
	comparable
}](ctx context.Context, obj T,
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
) error {
	_, err := create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	live, err := get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	_, err = update(ctx, obj, metav1.UpdateOptions{})
	return err
}
