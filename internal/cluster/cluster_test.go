package cluster

import (
	"cmp"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// loadSecret reads a Secret fixture, moving stringData into data as the
// API server does.
func loadSecret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := yaml.UnmarshalStrict(raw, s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	return s
}

func ptr[T any](v T) *T { return &v }

func TestFromSecret(t *testing.T) {
	tests := []struct {
		fixture string
		want    *Cluster
		wantErr string
	}{
		{
			fixture: "full.yaml",
			want: &Cluster{
				Name: "prod", Server: "https://prod.example.com:6443",
				Config: Config{
					BearerToken:        "token-1",
					TLSClientConfig:    TLSClientConfig{ServerName: "prod.internal", CAData: []byte("fake-ca")},
					ProxyURL:           "http://proxy.example.com:3128",
					DisableCompression: true,
				},
				Namespaces: []string{"web", "api", "jobs"}, ClusterResources: true, Project: "payments", Shard: ptr(int64(2)),
				Labels:      map[string]string{"argocd.argoproj.io/secret-type": "cluster", "env": "prod"},
				Annotations: map[string]string{"team": "payments"},
				SecretName:  "cluster-prod",
			},
		},
		{
			fixture: "in-cluster.yaml",
			want: &Cluster{
				Name: "in-cluster", Server: InClusterServer, SecretName: "cluster-local",
				Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster", "staging": "true"},
			},
		},
		{
			fixture: "exec.yaml",
			want: &Cluster{
				Name: "dev", Server: "https://dev.example.com", SecretName: "cluster-exec",
				Config: Config{
					TLSClientConfig: TLSClientConfig{Insecure: true},
					ExecProviderConfig: &ExecProviderConfig{
						Command: "get-token", Args: []string{"--cluster", "dev"},
						Env: map[string]string{"REGION": "eu", "A": "1"}, APIVersion: "client.authentication.k8s.io/v1beta1",
					},
				},
				Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"},
			},
		},
		{fixture: "no-server.yaml", wantErr: "cluster Secret cluster-broken: key server is missing"},
		{fixture: "bad-config.yaml", wantErr: "cluster Secret cluster-bad-config: key config is not valid JSON"},
		{fixture: "bad-shard.yaml", wantErr: `cluster Secret cluster-bad-shard: key shard "two" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := FromSecret(loadSecret(t, tt.fixture))
			if tt.wantErr != "" {
				var se *SecretError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &se) {
					t.Fatalf("error = %v, want a *SecretError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromSecrets(t *testing.T) {
	tests := []struct {
		name          string
		fixtures      []string
		withInCluster bool
		want          []string // name@server in order
		wantErr       []string // Secrets reported as unreadable
	}{
		{
			name: "the implicit in-cluster comes first", withInCluster: true,
			fixtures: []string{"full.yaml", "exec.yaml"},
			want:     []string{"in-cluster@https://kubernetes.default.svc", "dev@https://dev.example.com", "prod@https://prod.example.com:6443"},
		},
		{
			name: "a Secret for the in-cluster URL replaces the implicit one", withInCluster: true,
			fixtures: []string{"full.yaml", "in-cluster.yaml"},
			want:     []string{"in-cluster@https://kubernetes.default.svc", "prod@https://prod.example.com:6443"},
		},
		{
			name: "in-cluster disabled", withInCluster: false,
			fixtures: []string{"exec.yaml"},
			want:     []string{"dev@https://dev.example.com"},
		},
		{
			name: "unreadable Secrets are left out and reported", withInCluster: true,
			fixtures: []string{"no-server.yaml", "exec.yaml", "bad-config.yaml"},
			want:     []string{"in-cluster@https://kubernetes.default.svc", "dev@https://dev.example.com"},
			wantErr:  []string{"cluster-broken", "cluster-bad-config"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var secrets []corev1.Secret
			for _, f := range tt.fixtures {
				secrets = append(secrets, *loadSecret(t, f))
			}
			got, err := FromSecrets(secrets, tt.withInCluster)
			var names []string
			for _, c := range got {
				names = append(names, c.Name+"@"+c.Server)
			}
			if diff := gocmp.Diff(tt.want, names); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, s := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "cluster Secret "+s+":") {
					t.Errorf("error %v does not name Secret %s", err, s)
				}
			}
		})
	}
}

func TestRESTConfig(t *testing.T) {
	local := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "local-token", QPS: 100, Burst: 200}
	tests := []struct {
		fixture string // "" for the implicit in-cluster destination
		want    *rest.Config
		proxy   string
		wantErr string
	}{
		{fixture: "", want: local},
		{fixture: "in-cluster.yaml", want: local},
		{
			fixture: "full.yaml", proxy: "http://proxy.example.com:3128",
			want: &rest.Config{
				Host: "https://prod.example.com:6443", BearerToken: "token-1", DisableCompression: true, QPS: 100, Burst: 200,
				TLSClientConfig: rest.TLSClientConfig{ServerName: "prod.internal", CAData: []byte("fake-ca")},
			},
		},
		{
			fixture: "exec.yaml",
			want: &rest.Config{
				Host: "https://dev.example.com", QPS: 100, Burst: 200, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
				ExecProvider: &clientcmdapi.ExecConfig{
					Command: "get-token", Args: []string{"--cluster", "dev"}, APIVersion: "client.authentication.k8s.io/v1beta1",
					Env:             []clientcmdapi.ExecEnvVar{{Name: "A", Value: "1"}, {Name: "REGION", Value: "eu"}},
					InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
				},
			},
		},
		{fixture: "aws.yaml", wantErr: "awsAuthConfig is not supported"},
	}
	for _, tt := range tests {
		t.Run(cmp.Or(tt.fixture, "implicit in-cluster"), func(t *testing.T) {
			c := InCluster()
			if tt.fixture != "" {
				var err error
				if c, err = FromSecret(loadSecret(t, tt.fixture)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.RESTConfig(local)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkProxy(t, got, tt.proxy)
			got.Proxy = nil
			if diff := gocmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(rest.Config{}, rest.TLSClientConfig{})); diff != "" {
				t.Errorf("rest config (-want +got):\n%s", diff)
			}
			if got == local {
				t.Error("the in-cluster config must be a copy, not the controller's own")
			}
		})
	}
}

func checkProxy(t *testing.T, cfg *rest.Config, want string) {
	t.Helper()
	if want == "" {
		if cfg.Proxy != nil {
			t.Error("unexpected proxy")
		}
		return
	}
	if cfg.Proxy == nil {
		t.Fatalf("no proxy, want %s", want)
	}
	req, _ := http.NewRequest(http.MethodGet, cfg.Host, nil)
	u, err := cfg.Proxy(req)
	if err != nil || u == nil || u.String() != want {
		t.Errorf("proxy = %v (%v), want %s", u, err, want)
	}
}
