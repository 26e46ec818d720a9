package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wavecd/wavecd/internal/appclient"
)

func TestAPIResourceTree(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	var tree appclient.ApplicationTree
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := h.do("GET", "/api/v1/applications/guestbook/resource-tree", admin, nil)
		if r.status != http.StatusOK {
			t.Fatalf("resource tree: %d %s", r.status, r.body)
		}
		h.decode(r, &tree)
		if (countKind(tree, "Pod") == 2 && readyEndpoints(tree) == "2/2") || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // the controller-manager creates the replica set, pods and endpoints
	}
	byKind := map[string][]appclient.ResourceNode{}
	for _, n := range tree.Nodes {
		byKind[n.Kind] = append(byKind[n.Kind], n)
	}
	dep, rs, pods := byKind["Deployment"], byKind["ReplicaSet"], byKind["Pod"]
	if len(dep) != 1 || len(rs) != 1 || len(pods) != 2 {
		t.Fatalf("tree has %d Deployments, %d ReplicaSets, %d Pods: %+v", len(dep), len(rs), len(pods), tree.Nodes)
	}
	if dep[0].UID == "" || len(dep[0].ParentRefs) != 0 || dep[0].Health == nil || !slices.Equal(dep[0].Images, []string{"nginx:1.27"}) {
		t.Errorf("deployment node %+v", dep[0])
	}
	if p := rs[0].ParentRefs; len(p) != 1 || p[0].UID != dep[0].UID || p[0].Kind != "Deployment" {
		t.Errorf("replica set parents %+v", p)
	}
	for _, pod := range pods {
		if p := pod.ParentRefs; len(p) != 1 || p[0].UID != rs[0].UID {
			t.Errorf("pod %s parents %+v", pod.Name, p)
		}
		if pod.App != "guestbook" || len(pod.Info) == 0 {
			t.Errorf("pod node %+v", pod)
		}
	}
	// The Service's EndpointSlice hangs below it and names both pods.
	svc, eps := byKind["Service"], byKind["EndpointSlice"]
	if len(svc) != 1 || len(eps) != 1 || len(eps[0].ParentRefs) != 1 || eps[0].ParentRefs[0].UID != svc[0].UID {
		t.Fatalf("services %+v, endpoint slices %+v: want one slice below the Service", svc, eps)
	}
	var routed []string
	if ni := eps[0].NetworkingInfo; ni != nil {
		for _, ref := range ni.TargetRefs {
			routed = append(routed, ref.Kind+"/"+ref.Name)
		}
	}
	slices.Sort(routed)
	if want := []string{"Pod/" + pods[0].Name, "Pod/" + pods[1].Name}; !slices.Equal(routed, slices.Sorted(slices.Values(want))) {
		t.Errorf("the endpoint slice routes to %v, want %v", routed, want)
	}
	if len(eps[0].Info) != 1 || !strings.HasPrefix(eps[0].Info[0].Value, "2/2 ready ") {
		t.Errorf("endpoint slice info %+v, want 2/2 ready and the addresses", eps[0].Info)
	}
	// The child Application is a node, and its ConfigMap hangs below it.
	cms := byKind["ConfigMap"]
	apps := byKind["Application"]
	if len(apps) != 1 || len(cms) != 1 || cms[0].App != "child" || len(cms[0].ParentRefs) != 1 || cms[0].ParentRefs[0].Name != "child" {
		t.Errorf("child app nodes %+v, config maps %+v", apps, cms)
	}
	if apps[0].SyncWave != 1 {
		t.Errorf("child app wave %d", apps[0].SyncWave)
	}
}

// readyEndpoints is the ready count of the tree's endpoint slice, "2/2".
func readyEndpoints(tree appclient.ApplicationTree) string {
	for _, node := range tree.Nodes {
		if node.Kind == "EndpointSlice" && len(node.Info) > 0 {
			ready, _, _ := strings.Cut(node.Info[0].Value, " ")
			return ready
		}
	}
	return ""
}

func countKind(tree appclient.ApplicationTree, kind string) int {
	n := 0
	for _, node := range tree.Nodes {
		if node.Kind == kind {
			n++
		}
	}
	return n
}

func TestAPIManagedResourcesMasksSecrets(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	r := h.do("GET", "/api/v1/applications/guestbook/managed-resources", h.admin(), nil)
	if r.status != http.StatusOK {
		t.Fatalf("managed resources: %d %s", r.status, r.body)
	}
	for _, secret := range []string{"super-secret-value", "c3VwZXItc2VjcmV0LXZhbHVl", "YW5vdGhlci1oaWRkZW4tdmFsdWU="} {
		if strings.Contains(r.body, secret) {
			t.Errorf("managed-resources shows the secret value %q", secret)
		}
	}
	var out struct {
		Items []struct {
			Kind, Name, LiveState, TargetState string
			Modified                           bool
		} `json:"items"`
	}
	h.decode(r, &out)
	var secretLive map[string]any
	for _, it := range out.Items {
		if it.Kind == "Secret" {
			if err := json.Unmarshal([]byte(it.LiveState), &secretLive); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, _ := secretLive["data"].(map[string]any)
	if data["other"] != "++++++++" || data["password"] != "+++++++++" || data["token"] != data["password"] {
		t.Errorf("masked secret data %v, want equal values with equal masks", data)
	}
	if len(out.Items) != 4 {
		t.Errorf("items %+v, want the Deployment, Secret, Service and child app", out.Items)
	}
}
