package server

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// kubeClient installs the CRDs (idempotently) and returns a client for the
// test cluster.
func kubeClient(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	ext, err := apiextensions.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := install.InstallCRDs(t.Context(), ext, install.CRDOptions{}); err != nil {
		t.Fatal(err)
	}
	ac, err := appclient.New(env.Config, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return ac.Kube
}

// TestWebhookRefreshesClusterApps sends pushes to a webhook wired to the
// real API server: the secret comes from argocd-secret, apps are listed
// and refreshed (annotated) through the Kubernetes API.
func TestWebhookRefreshesClusterApps(t *testing.T) {
	env := testenv.Get(t)
	c := kubeClient(t, env)
	tests := map[string]struct {
		signature   string
		wantStatus  int
		wantRefresh []string
	}{
		"valid signature refreshes exactly the matching apps": {
			signature: sign(testSecret, pushPayload), wantStatus: http.StatusOK,
			wantRefresh: []string{"branch", "head-scp", "multi-source"},
		},
		"bad signature refreshes nothing": {
			signature: sign("not the secret", pushPayload), wantStatus: http.StatusBadRequest,
		},
		"missing signature refreshes nothing": {wantStatus: http.StatusBadRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			createWebhookFixtures(t, c, ns)
			h := NewWebhook(WebhookOptions{
				Apps:      application.Lister{Reader: c, Namespaces: []string{ns}},
				Refresher: application.AnnotationRefresher{Client: c},
				Secrets:   SettingsSecret{Reader: c, Namespace: ns},
			})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, webhookRequest{event: "push", body: pushPayload, signature: tc.signature}.build())
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantRefresh, refreshedApps(t, c, ns)); diff != "" {
				t.Errorf("apps with %s (-want +got):\n%s", application.RefreshAnnotation, diff)
			}
		})
	}
}

func createWebhookFixtures(t *testing.T, c client.Client, ns string) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SettingsSecretName},
		Data:       map[string][]byte{GitHubSecretKey: []byte(testSecret)},
	}
	multi := testApp("multi-source", "", "")
	multi.Spec.Source = nil
	multi.Spec.Sources = v1alpha1.ApplicationSources{
		{RepoURL: "https://github.com/acme/values.git", TargetRevision: "main"},
		{RepoURL: "https://github.com/acme/seed", TargetRevision: "main", Path: "apps/b"},
	}
	apps := []v1alpha1.Application{
		testApp("branch", "https://github.com/acme/seed.git", "main"),
		testApp("head-scp", "git@github.com:acme/seed.git", "HEAD"),
		testApp("other-branch", "https://github.com/acme/seed.git", "dev"),
		testApp("other-repo", "https://github.com/acme/other.git", "main"),
		multi,
	}
	objs := []client.Object{secret}
	for i := range apps {
		apps[i].Namespace = ns
		apps[i].Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"}
		objs = append(objs, &apps[i])
	}
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
}

func refreshedApps(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	var list v1alpha1.ApplicationList
	if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, app := range list.Items {
		switch v, ok := app.Annotations[application.RefreshAnnotation]; {
		case ok && v == string(application.RefreshNormal):
			got[app.Name] = true
		case ok:
			t.Errorf("app %s: %s=%q, want normal", app.Name, application.RefreshAnnotation, v)
		}
	}
	if len(got) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(got))
}

func TestSettingsSecret(t *testing.T) {
	env := testenv.Get(t)
	c := kubeClient(t, env)
	type secretSpec struct {
		name   string
		labels map[string]string
		data   map[string]string
	}
	tests := map[string]struct {
		secrets []secretSpec
		want    string
		wantErr string
	}{
		"no argocd-secret": {},
		"no key":           {secrets: []secretSpec{{name: SettingsSecretName, data: map[string]string{"admin.password": "x"}}}},
		"inline value": {
			secrets: []secretSpec{{name: SettingsSecretName, data: map[string]string{GitHubSecretKey: "s3cr3t"}}},
			want:    "s3cr3t",
		},
		"reference to another Secret": {
			secrets: []secretSpec{
				{name: SettingsSecretName, data: map[string]string{GitHubSecretKey: "$hooks:github"}},
				{name: "hooks", labels: map[string]string{PartOfLabel: "argocd"}, data: map[string]string{"github": "from-ref"}},
			},
			want: "from-ref",
		},
		"reference without the part-of label": {
			secrets: []secretSpec{
				{name: SettingsSecretName, data: map[string]string{GitHubSecretKey: "$hooks:github"}},
				{name: "hooks", data: map[string]string{"github": "from-ref"}},
			},
			wantErr: "lacks the label app.kubernetes.io/part-of=argocd",
		},
		"reference to a missing Secret": {
			secrets: []secretSpec{{name: SettingsSecretName, data: map[string]string{GitHubSecretKey: "$hooks:github"}}},
			wantErr: "read Secret",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			for _, s := range tc.secrets {
				sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name, Labels: s.labels}, StringData: s.data}
				if err := c.Create(t.Context(), sec); err != nil {
					t.Fatal(err)
				}
			}
			got, err := SettingsSecret{Reader: c, Namespace: ns}.GitHubWebhookSecret(t.Context())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
