package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// guardedWebhooks are two webhooks as charts install them: guard, failing
// closed, served by a Deployment whose command needs a database; lenient,
// failing open, whose Service has no pod at all.
const guardedWebhooks = `apiVersion: v1
kind: Namespace
metadata: {name: hooks}
---
apiVersion: v1
kind: Namespace
metadata: {name: guarded, labels: {guarded: "yes"}}
---
apiVersion: v1
kind: Service
metadata: {name: guard-db, namespace: hooks}
spec:
  selector: {app: guard-db}
  ports: [{port: 5432}]
---
apiVersion: v1
kind: Service
metadata: {name: guard, namespace: hooks}
spec:
  selector: {app: guard}
  ports: [{port: 443, targetPort: 9443}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: guard, namespace: hooks}
spec:
  selector: {matchLabels: {app: guard}}
  template:
    metadata: {labels: {app: guard}}
    spec:
      containers:
      - name: guard
        image: ghcr.io/example/guard:1.0
        args: [--listen=:9443, --database=postgres://guard@guard-db:5432/guard]
        ports: [{containerPort: 9443}]
        readinessProbe: {httpGet: {path: /readyz, port: 9443, scheme: HTTPS}, initialDelaySeconds: 5}
---
apiVersion: v1
kind: Service
metadata: {name: lenient, namespace: hooks}
spec:
  selector: {app: lenient}
  ports: [{port: 443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: guard}
webhooks:
- name: guard.hooks.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {service: {name: guard, namespace: hooks, path: /validate}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  namespaceSelector: {matchLabels: {guarded: "yes"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: lenient}
webhooks:
- name: lenient.hooks.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {service: {name: lenient, namespace: hooks, path: /mutate}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}]
  namespaceSelector: {matchLabels: {guarded: "yes"}}
`

const guardDB = `apiVersion: v1
kind: Pod
metadata: {name: guard-db, namespace: hooks, labels: {app: guard-db}}
spec:
  containers: [{name: postgres, image: postgres:17, ports: [{containerPort: 5432}]}]
`

// testWebhook: while the guard's pod is not Ready (it crash-loops for want
// of its database), the API server refuses ConfigMaps with its own error;
// the lenient webhook without any pod lets Secrets through; once the
// database runs, the guard turns Ready and ConfigMaps pass.
func testWebhook(t *testing.T, c *localCluster) {
	ctx := t.Context()
	c.mustCreate(t, guardedWebhooks)
	cm := func(name string) error {
		_, err := c.client.CoreV1().ConfigMaps("guarded").Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}
	eventually(t, 30*time.Second, "the guard's pod crash-looping for want of guard-db", func() (bool, error) {
		p, err := onlyPod(t, c, "hooks", "app=guard")
		return err == nil && p != nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1, err
	})
	err := cm("refused")
	if err == nil || !hasAll(err.Error(), `failed calling webhook "guard.hooks.example.com"`,
		`Post "https://guard.hooks.svc:443/validate?timeout=10s": no endpoints available for service "guard"`) {
		t.Fatalf("ConfigMap while the guard is not Ready: %v; want the API server's no endpoints error", err)
	}
	if _, err := c.client.CoreV1().Secrets("guarded").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}},
		metav1.CreateOptions{}); err != nil {
		t.Errorf("Secret through a failurePolicy Ignore webhook without endpoints: %v", err)
	}
	c.mustCreate(t, guardDB)
	eventually(t, 60*time.Second, "a ConfigMap passes once the guard is Ready", func() (bool, error) {
		err := cm("allowed")
		return err == nil, err
	})
}

const metricsAPI = `apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: hooks}
spec:
  selector: {app: metrics-server}
  ports: [{name: https, port: 443, targetPort: https}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: metrics-server, namespace: hooks}
spec:
  selector: {matchLabels: {app: metrics-server}}
  template:
    metadata: {labels: {app: metrics-server}}
    spec:
      containers:
      - name: metrics-server
        image: registry.k8s.io/metrics-server/metrics-server:v0.7.2
        ports: [{name: https, containerPort: 10250}]
        readinessProbe: {httpGet: {path: /readyz, port: https, scheme: HTTPS}, initialDelaySeconds: 40}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  service: {name: metrics-server, namespace: hooks}
  group: metrics.k8s.io
  version: v1beta1
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// testAPIService: while metrics-server is not Ready the APIService is
// unavailable and its group's discovery fails; once it is Ready, both
// work.
func testAPIService(t *testing.T, c *localCluster) {
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.dir+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	c.mustCreate(t, metricsAPI)
	available := func() (string, error) {
		a, err := dyn.Resource(apiServiceGVR).Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		conds, _, _ := unstructured.NestedSlice(a.Object, "status", "conditions")
		for _, cond := range conds {
			if m, ok := cond.(map[string]any); ok && m["type"] == "Available" {
				return m["status"].(string) + " " + m["reason"].(string), nil
			}
		}
		return "", nil
	}
	eventually(t, 20*time.Second, "the APIService unavailable: MissingEndpoints", func() (bool, error) {
		s, err := available()
		return s == "False MissingEndpoints", err
	})
	disco := c.client.Discovery().RESTClient()
	if _, err := disco.Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(ctx); err == nil {
		t.Error("discovery of metrics.k8s.io/v1beta1 answered while metrics-server was not Ready")
	}
	eventually(t, 60*time.Second, "the APIService available once metrics-server is Ready", func() (bool, error) {
		s, err := available()
		return s == "True Passed", err
	})
	body, err := disco.Get().AbsPath("/apis/metrics.k8s.io/v1beta1").DoRaw(ctx)
	if err != nil || !hasAll(string(body), `"groupVersion":"metrics.k8s.io/v1beta1"`) {
		t.Errorf("discovery of metrics.k8s.io/v1beta1: %v %s", err, body)
	}
}
