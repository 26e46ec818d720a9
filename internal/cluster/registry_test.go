package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestRegistry lists and looks up clusters through the API server, which
// decides what the label selector and namespace select.
func TestRegistry(t *testing.T) {
	env := testenv.Get(t)
	ns, other := env.Namespace(t), env.Namespace(t)
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(namespace, fixture string, mutate func(*corev1.Secret)) {
		t.Helper()
		s := loadSecret(t, fixture)
		s.Namespace = namespace
		if mutate != nil {
			mutate(s)
		}
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	create(ns, "full.yaml", nil)
	create(ns, "exec.yaml", nil)
	create(ns, "bad-config.yaml", nil)
	// Not a cluster Secret: same keys, no label.
	create(ns, "exec.yaml", func(s *corev1.Secret) {
		s.Name, s.Labels = "not-a-cluster", nil
		s.Data["name"] = []byte("unlabelled")
	})
	// Another namespace's cluster.
	create(other, "exec.yaml", func(s *corev1.Secret) { s.Data["name"] = []byte("elsewhere") })

	reg := Registry{Reader: c, Namespace: ns}
	t.Run("list", func(t *testing.T) {
		got, err := reg.List(ctx)
		var se *SecretError
		if !errors.As(err, &se) || se.Secret != "cluster-bad-config" {
			t.Errorf("error = %v, want the unreadable Secret cluster-bad-config named", err)
		}
		var names []string
		for _, cl := range got {
			names = append(names, cl.Name)
		}
		if diff := cmp.Diff([]string{"in-cluster", "dev", "prod"}, names); diff != "" {
			t.Errorf("clusters (-want +got):\n%s", diff)
		}
	})
	t.Run("lookups", func(t *testing.T) {
		for _, tt := range []struct {
			desc     string
			dest     v1alpha1.ApplicationDestination
			want     string
			notFound bool
			wantErr  string
		}{
			{desc: "by name", dest: v1alpha1.ApplicationDestination{Name: "prod"}, want: "https://prod.example.com:6443"},
			{desc: "by server with a trailing slash", dest: v1alpha1.ApplicationDestination{Server: "https://dev.example.com/"}, want: "https://dev.example.com"},
			{desc: "the in-cluster name", dest: v1alpha1.ApplicationDestination{Name: "in-cluster"}, want: InClusterServer},
			{desc: "an unlabelled Secret is no cluster", dest: v1alpha1.ApplicationDestination{Name: "unlabelled"}, notFound: true},
			{desc: "another namespace's cluster", dest: v1alpha1.ApplicationDestination{Name: "elsewhere"}, notFound: true},
			{desc: "an unknown server", dest: v1alpha1.ApplicationDestination{Server: "https://nowhere"}, notFound: true},
			{desc: "both name and server", dest: v1alpha1.ApplicationDestination{Name: "prod", Server: "https://x"}, wantErr: "can't have both name and server"},
		} {
			got, err := reg.Resolve(ctx, tt.dest)
			switch {
			case tt.notFound:
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "cluster-bad-config") {
					t.Errorf("%s: error = %v, want ErrNotFound naming the unreadable Secret", tt.desc, err)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s: error = %v, want %q", tt.desc, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("%s: %v", tt.desc, err)
			case got.Server != tt.want:
				t.Errorf("%s: server = %s, want %s", tt.desc, got.Server, tt.want)
			}
		}
	})
	t.Run("in-cluster disabled", func(t *testing.T) {
		_, err := Registry{Reader: c, Namespace: other, InClusterDisabled: true}.ByName(ctx, InClusterName)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("error = %v, want ErrNotFound", err)
		}
	})
}
