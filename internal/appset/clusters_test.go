package appset

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/internal/cluster"
)

func jsonElement(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

func (h *harness) createClusterSecret(name, clusterName, server string, labels map[string]string) *corev1.Secret {
	h.t.Helper()
	l := map[string]string{cluster.LabelSecretType: cluster.SecretTypeCluster}
	for k, v := range labels {
		l[k] = v
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name, Labels: l},
		StringData: map[string]string{"name": clusterName, "server": server, "config": `{"tlsClientConfig":{"insecure":true}}`},
	}
	if err := h.c.Create(context.Background(), s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// TestClustersGenerator: the selector picks the labelled cluster Secrets
// (and not the implicit in-cluster one); labelling or deleting a Secret
// regenerates the apps.
func TestClustersGenerator(t *testing.T) {
	t.Parallel()
	h := start(t, harnessOptions{})
	h.createClusterSecret("cluster-eu", "staging-eu", "https://eu.example.com", map[string]string{"env": "staging"})
	h.createClusterSecret("cluster-us", "staging-us", "https://us.example.com", map[string]string{"env": "staging"})
	prod := h.createClusterSecret("cluster-prod", "prod", "https://prod.example.com", map[string]string{"env": "prod"})
	h.createClusterSecret("cluster-other", "other", "https://other.example.com", nil)
	h.createSet(`
metadata: {name: clusters}
spec:
  syncPolicy: {preserveResourcesOnDeletion: true}
  generators:
  - clusters:
      selector:
        matchLabels: {env: staging}
      values:
        suffix: '{{metadata.labels.env}}'
  template:
    metadata:
      name: 'guestbook-{{name}}'
      labels: {env: '{{values.suffix}}'}
    spec:
      project: default
      source: {repoURL: https://example.com/repo.git, targetRevision: main, path: guestbook}
      destination: {server: '{{server}}', namespace: guestbook}
`, "")
	wantApps := func(want ...string) {
		t.Helper()
		h.eventually(30*time.Second, "apps "+strings.Join(want, ","), func() bool {
			return slices.Equal(h.appNames(), want)
		}, func() string { return strings.Join(h.appNames(), ",") })
	}
	wantApps("guestbook-staging-eu", "guestbook-staging-us")
	app := h.app("guestbook-staging-eu")
	if app.Spec.Destination.Server != "https://eu.example.com" || app.Labels["env"] != "staging" {
		t.Errorf("staging-eu app: destination %+v, labels %v", app.Spec.Destination, app.Labels)
	}

	prod.Labels["env"] = "staging"
	if err := h.c.Update(context.Background(), prod); err != nil {
		t.Fatal(err)
	}
	wantApps("guestbook-prod", "guestbook-staging-eu", "guestbook-staging-us")

	if err := h.c.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "cluster-us"}}); err != nil {
		t.Fatal(err)
	}
	wantApps("guestbook-prod", "guestbook-staging-eu")
}
