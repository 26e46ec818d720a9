package appclient

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/health"
	"github.com/wavecd/wavecd/internal/kube"
)

// ResourceRef names one object of a resource tree, as in Argo CD.
type ResourceRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// InfoItem is a name/value fact shown with a node.
type InfoItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ResourceNode is one object of an app's resource tree, with Argo CD's
// JSON shape: a managed object has no parent refs; an object it owns
// (ownerReferences) or a managed object of a child Application names its
// parent.
type ResourceNode struct {
	ResourceRef     `json:",inline"`
	ParentRefs      []ResourceRef          `json:"parentRefs,omitempty"`
	Info            []InfoItem             `json:"info,omitempty"`
	ResourceVersion string                 `json:"resourceVersion,omitempty"`
	Images          []string               `json:"images,omitempty"`
	Health          *v1alpha1.HealthStatus `json:"health,omitempty"`
	CreatedAt       *metav1.Time           `json:"createdAt,omitempty"`
	// App is the Application that manages this object or, for an owned
	// object, its managed ancestor (a wavecd field).
	App string `json:"app,omitempty"`
	// Status is the object's sync status when it is managed (a wavecd field).
	Status v1alpha1.SyncStatusCode `json:"status,omitempty"`
	// SyncWave is the object's wave when it is managed (a wavecd field).
	SyncWave int64 `json:"syncWave,omitempty"`
	// Missing marks a managed object that does not exist yet.
	Missing bool `json:"missing,omitempty"`
	// NetworkingInfo names, for an EndpointSlice, the pods its endpoints
	// route to.
	NetworkingInfo *NetworkingInfo `json:"networkingInfo,omitempty"`
}

// NetworkingInfo is Argo CD's ResourceNetworkingInfo, with the targets
// only.
type NetworkingInfo struct {
	TargetRefs []ResourceRef `json:"targetRefs,omitempty"`
}

// ApplicationTree is an app's resource tree, as Argo CD's resource-tree
// endpoint returns it; Nodes lists parents before their children.
type ApplicationTree struct {
	Nodes []ResourceNode `json:"nodes"`
}

// ownedKinds are the kinds whose objects the tree finds by their owner
// references: what a Deployment, StatefulSet, DaemonSet, Job or CronJob
// creates, and a Service's EndpointSlices.
var ownedKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "Pod"},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
}

// ResourceTree builds an app's resource tree: its managed objects as
// status.resources lists them, what they own (Deployment -> ReplicaSet ->
// Pod, StatefulSet -> Pod, CronJob -> Job -> Pod, Service ->
// EndpointSlice, whose node names the pods it routes to), and, under each child
// Application that exists, the child's tree, as Get nests them.
type ResourceTree struct {
	Client *Client
	Name   string
	// Reader reads the managed objects; default Client.Kube. It needs a
	// REST mapper that knows every managed kind.
	Reader client.Reader
}

// Run builds the tree.
func (a *ResourceTree) Run(ctx context.Context) (*ApplicationTree, error) {
	t, err := (&Get{Client: a.Client, Name: a.Name}).Run(ctx)
	if err != nil {
		return nil, err
	}
	return a.Build(ctx, t)
}

// Build builds the tree of an app tree Get returned.
func (a *ResourceTree) Build(ctx context.Context, t *AppTree) (*ApplicationTree, error) {
	reader := a.Reader
	if reader == nil {
		reader = a.Client.Kube
	}
	b := &treeBuilder{reader: reader, namespaces: map[string]bool{}, listed: map[string][]unstructured.Unstructured{}}
	if err := b.addApp(ctx, t, nil); err != nil {
		return nil, err
	}
	if err := b.addOwned(ctx); err != nil {
		return nil, err
	}
	return &ApplicationTree{Nodes: b.nodes}, nil
}

type treeBuilder struct {
	reader client.Reader
	nodes  []ResourceNode
	// namespaces are those of the managed objects, where addOwned looks.
	namespaces map[string]bool
	listed     map[string][]unstructured.Unstructured // "gvk|namespace" -> objects
}

// addApp adds the managed objects of t (with parent as their parent) and
// recurses into child Applications.
func (b *treeBuilder) addApp(ctx context.Context, t *AppTree, parent *ResourceRef) error {
	for _, r := range t.App.Status.Resources {
		obj, err := b.live(ctx, r)
		if err != nil {
			return err
		}
		n := ResourceNode{
			ResourceRef: ResourceRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name},
			Health:      r.Health, App: t.App.Name, Status: r.Status, SyncWave: r.SyncWave, Missing: obj == nil,
		}
		if parent != nil {
			n.ParentRefs = []ResourceRef{*parent}
		}
		if obj != nil {
			fill(&n, obj)
			if ns := obj.GetNamespace(); ns != "" {
				b.namespaces[ns] = true
			}
		}
		b.nodes = append(b.nodes, n)
		child, ok := t.Children[r.Name]
		if ok && application.IsApplication(r.Group, r.Kind) {
			ref := n.ResourceRef
			if err := b.addApp(ctx, child, &ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// live reads a managed object through one List per kind and namespace;
// nil when it does not exist or its kind is unknown.
func (b *treeBuilder) live(ctx context.Context, r v1alpha1.ResourceStatus) (*unstructured.Unstructured, error) {
	gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	if gvk.Version == "" {
		return nil, nil
	}
	items, err := b.list(ctx, gvk, r.Namespace)
	if err != nil {
		return nil, err
	}
	for i := range items {
		if items[i].GetName() == r.Name {
			return &items[i], nil
		}
	}
	return nil, nil
}

func (b *treeBuilder) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	key := gvk.String() + "|" + namespace
	if items, ok := b.listed[key]; ok {
		return items, nil
	}
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	err := b.reader.List(ctx, &list, opts...)
	if err != nil && !isGone(err) {
		return nil, fmt.Errorf("list %s in %q: %w", gvk.Kind, namespace, err)
	}
	b.listed[key] = list.Items
	return list.Items, nil
}

// addOwned adds, below every node, the objects that name it as owner, in
// the namespaces of the managed objects.
func (b *treeBuilder) addOwned(ctx context.Context) error {
	byOwner := map[types.UID][]*unstructured.Unstructured{}
	for _, ns := range slices.Sorted(maps.Keys(b.namespaces)) {
		for _, gvk := range ownedKinds {
			items, err := b.list(ctx, gvk, ns)
			if err != nil {
				return err
			}
			for i := range items {
				for _, o := range items[i].GetOwnerReferences() {
					byOwner[o.UID] = append(byOwner[o.UID], &items[i])
				}
			}
		}
	}
	seen := map[string]bool{}
	for i := 0; i < len(b.nodes); i++ { // b.nodes grows: children are visited too
		parent := b.nodes[i]
		if parent.UID == "" {
			continue
		}
		for _, obj := range byOwner[types.UID(parent.UID)] {
			if seen[string(obj.GetUID())] {
				continue
			}
			seen[string(obj.GetUID())] = true
			n := ResourceNode{ParentRefs: []ResourceRef{parent.ResourceRef}, App: parent.App}
			fill(&n, obj)
			n.Health = assess(obj)
			b.nodes = append(b.nodes, n)
		}
	}
	return nil
}

// builtinHealth assesses owned objects with the built-in checks.
var builtinHealth, _ = health.New(health.Options{})

func assess(obj *unstructured.Unstructured) *v1alpha1.HealthStatus {
	if builtinHealth == nil {
		return nil
	}
	st := builtinHealth.Assess(obj)
	if st.Status == "" {
		return nil
	}
	return &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusCode(st.Status), Message: st.Message}
}

// fill copies what the tree shows of a live object into n.
func fill(n *ResourceNode, obj *unstructured.Unstructured) {
	gvk := obj.GroupVersionKind()
	n.Group, n.Version, n.Kind = gvk.Group, gvk.Version, gvk.Kind
	n.Namespace, n.Name, n.UID = obj.GetNamespace(), obj.GetName(), string(obj.GetUID())
	n.ResourceVersion = obj.GetResourceVersion()
	created := obj.GetCreationTimestamp()
	n.CreatedAt = &created
	n.Images = kube.ContainerImages(obj)
	n.Info = info(obj)
	if gvk.Kind == "EndpointSlice" {
		n.NetworkingInfo = endpointTargets(obj)
	}
}

// endpointTargets names the objects an EndpointSlice's endpoints route to.
func endpointTargets(obj *unstructured.Unstructured) *NetworkingInfo {
	eps, _, _ := unstructured.NestedSlice(obj.Object, "endpoints")
	ni := &NetworkingInfo{}
	for _, e := range eps {
		m, _ := e.(map[string]any)
		ref, _ := m["targetRef"].(map[string]any)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		if kind == "" || name == "" {
			continue
		}
		ns, _ := ref["namespace"].(string)
		uid, _ := ref["uid"].(string)
		ni.TargetRefs = append(ni.TargetRefs, ResourceRef{Kind: kind, Namespace: ns, Name: name, UID: uid})
	}
	if len(ni.TargetRefs) == 0 {
		return nil
	}
	return ni
}

// info lists the facts Argo CD shows on pod and replica nodes.
func info(obj *unstructured.Unstructured) []InfoItem {
	var out []InfoItem
	switch obj.GetKind() {
	case "Pod":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		statuses, _, _ := unstructured.NestedSlice(obj.Object, "status", "containerStatuses")
		ready, restarts := 0, int64(0)
		for _, s := range statuses {
			m, _ := s.(map[string]any)
			if r, _ := m["ready"].(bool); r {
				ready++
			}
			if n, ok := m["restartCount"].(int64); ok {
				restarts += n
			}
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "containers")
		out = append(out, InfoItem{"Status Reason", phase},
			InfoItem{"Containers", fmt.Sprintf("%d/%d", ready, len(containers))},
			InfoItem{"Restart Count", fmt.Sprint(restarts)})
	case "ReplicaSet", "StatefulSet", "Deployment":
		want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
		out = append(out, InfoItem{"Replicas", fmt.Sprintf("%d/%d", ready, want)})
		if rev := obj.GetAnnotations()["deployment.kubernetes.io/revision"]; rev != "" {
			out = append(out, InfoItem{"Revision", "Rev:" + rev})
		}
	case "EndpointSlice":
		out = append(out, endpointsInfo(obj))
	}
	return out
}

// endpointsInfo is an EndpointSlice's addresses and how many are ready.
func endpointsInfo(obj *unstructured.Unstructured) InfoItem {
	eps, _, _ := unstructured.NestedSlice(obj.Object, "endpoints")
	var addrs []string
	ready := 0
	for _, e := range eps {
		m, _ := e.(map[string]any)
		as, _, _ := unstructured.NestedStringSlice(m, "addresses")
		addrs = append(addrs, as...)
		if r, found, _ := unstructured.NestedBool(m, "conditions", "ready"); r || !found {
			ready++
		}
	}
	return InfoItem{"Endpoints", strings.TrimSpace(fmt.Sprintf("%d/%d ready %s", ready, len(eps), strings.Join(addrs, ", ")))}
}

// isGone reports errors of a kind that is not served (a CRD removed),
// which leave a node without a live object.
func isGone(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}
