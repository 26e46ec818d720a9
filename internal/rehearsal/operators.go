package rehearsal

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

// maxOperatorReport bounds one report's message.
const maxOperatorReport = 400

// operatorReports reads what the operators of a run that did not converge
// say of the custom resources the apps hold: each condition reading
// trouble (Degraded, Failed or Error True; Ready or Available False) with
// a message. Argo CD has no health check for most of them, so its apps
// read Healthy while an operator is stuck (an admission webhook refusing
// the objects it creates, a missing dependency); the operator's own
// status says why.
func operatorReports(ctx context.Context, cfg *rest.Config, c client.Reader, namespace string) []string {
	cluster, err := kube.New(cfg)
	if err != nil {
		return nil
	}
	apps := &v1alpha1.ApplicationList{}
	if err := c.List(ctx, apps, client.InNamespace(namespace)); err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, app := range apps.Items {
		for _, r := range app.Status.Resources {
			gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
			key := r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
			if !kube.IsCustomResource(gk) || seen[key] || r.Kind == "Application" {
				continue
			}
			seen[key] = true
			obj, err := cluster.GetOptional(ctx, kube.Ref{GVK: gk.WithVersion(r.Version), Namespace: r.Namespace, Name: r.Name})
			if err != nil || obj == nil {
				continue
			}
			if msg := troubleCondition(obj); msg != "" {
				out = append(out, fmt.Sprintf("%s %s (%s): %s", r.Kind, r.Name, app.Name, msg))
			}
		}
	}
	sort.Strings(out)
	return out
}

// troubleCondition is obj's first condition that reads trouble, as
// "Type=Status: message", or "".
func troubleCondition(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		msg, _ := m["message"].(string)
		bad := status == "True" && (typ == "Degraded" || typ == "Failed" || typ == "Error") ||
			status == "False" && (typ == "Ready" || typ == "Available")
		if bad && strings.TrimSpace(msg) != "" {
			if len(msg) > maxOperatorReport {
				msg = msg[:maxOperatorReport] + "..."
			}
			return typ + "=" + status + ": " + strings.TrimSpace(msg)
		}
	}
	return ""
}
