package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/cluster"
)

const clusterAddLong = `Register the cluster of a kubeconfig context as a destination.

With the context's credentials, create in that cluster the ServiceAccount
kube-system/wavecd-manager, the ClusterRole wavecd-manager-role (every verb on
every resource, as Argo CD's argocd-manager) bound to it, and a long-lived
token Secret; then store the cluster Secret (name, server, bearer token, CA)
in the controller's namespace of the current cluster. Applications reach the
cluster by destination.name (--name, default CONTEXT) or destination.server.

--in-cluster-server stores another API server URL than the kubeconfig's: the
one the controller reaches the cluster at when it runs in a pod.`

const clusterAddExample = `  # register the cluster of context staging, labelled for ApplicationSets
  wavecd cluster add staging --label env=staging --label region=eu

  # a controller in a pod reaches the cluster at another address
  wavecd cluster add kind-edge --in-cluster-server https://edge-control-plane:6443`

func newClusterAddCommand(s Streams, f *namespaceFlags) *cobra.Command {
	a := &clusterAdd{}
	var labels []string
	cmd := &cobra.Command{
		Use:     "add CONTEXT",
		Short:   "Register the cluster of a kubeconfig context",
		Long:    clusterAddLong,
		Example: clusterAddExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if a.Labels, err = parseLabels(labels); err != nil {
				return err
			}
			a.Context, a.Kubeconfig, a.Namespace = args[0], f.kube.kubeconfig, f.namespace
			if _, a.Home, err = f.connect(); err != nil {
				return err
			}
			res, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			return printClusterAdded(s.Out, res)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&a.Name, "name", "", "cluster name Applications use as destination.name (default: CONTEXT)")
	fl.StringArrayVar(&labels, "label", nil, "label of the cluster Secret, KEY=VALUE (repeatable; the ApplicationSet clusters generator selects on them)")
	fl.StringVar(&a.Server, "in-cluster-server", "", "API server URL to store instead of the kubeconfig's")
	fl.BoolVar(&a.Upsert, "upsert", false, "replace the cluster Secret when the cluster is registered already")
	return cmd
}

// clusterAdd registers the cluster of a kubeconfig context.
type clusterAdd struct {
	// Home is the client of the controller's cluster, where the Secret goes.
	Home      client.Client
	Namespace string
	// Kubeconfig and Context name the cluster to register.
	Kubeconfig, Context string
	// Name defaults to Context; Server to the context's API server URL.
	Name, Server string
	Labels       map[string]string
	// Upsert replaces an existing Secret for the same server.
	Upsert bool
}

// clusterAdded is what Run registered.
type clusterAdded struct {
	Name, Server, Secret string
	Replaced             bool
}

// Run creates wavecd's identity in the target and stores the Secret.
func (a *clusterAdd) Run(ctx context.Context) (*clusterAdded, error) {
	cfg, err := contextConfig(a.Kubeconfig, a.Context)
	if err != nil {
		return nil, err
	}
	target, err := newManager(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to context %s: %w", a.Context, err)
	}
	token, err := target.ensure(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster of context %s: %w", a.Context, err)
	}
	secret, err := a.secret(cfg, token)
	if err != nil {
		return nil, err
	}
	replaced, err := a.store(ctx, secret)
	if err != nil {
		return nil, err
	}
	return &clusterAdded{Name: string(secret.Data["name"]), Server: string(secret.Data["server"]), Secret: secret.Name, Replaced: replaced}, nil
}

// contextConfig is the client configuration of one kubeconfig context.
func contextConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	if _, ok := raw.Contexts[context]; !ok {
		return nil, fmt.Errorf("context %s is not in the kubeconfig", context)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %s: %w", context, err)
	}
	return cfg, nil
}

// secret builds the cluster Secret in Argo CD's format.
func (a *clusterAdd) secret(cfg *rest.Config, token string) (*corev1.Secret, error) {
	server := strings.TrimRight(cfg.Host, "/")
	if a.Server != "" {
		server = strings.TrimRight(a.Server, "/")
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the CA of context %s: %w", a.Context, err)
		}
		ca = b
	}
	conf, err := json.Marshal(cluster.Config{
		BearerToken:     token,
		TLSClientConfig: cluster.TLSClientConfig{Insecure: cfg.Insecure, ServerName: cfg.ServerName, CAData: ca},
	})
	if err != nil {
		return nil, fmt.Errorf("encode cluster config: %w", err)
	}
	labels := map[string]string{cluster.LabelSecretType: cluster.SecretTypeCluster}
	for k, v := range a.Labels {
		labels[k] = v
	}
	name := a.Name
	if name == "" {
		name = a.Context
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: a.Namespace, Name: clusterSecretName(server), Labels: labels,
			Annotations: map[string]string{"managed-by": "wavecd"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"name": []byte(name), "server": []byte(server), "config": conf},
	}, nil
}

// clusterSecretName is Argo CD's name for a cluster Secret:
// cluster-<host>-<FNV-32a of the server URL>.
func clusterSecretName(server string) string {
	host := server
	if u, err := url.Parse(server); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(server))
	return fmt.Sprintf("cluster-%s-%d", strings.ToLower(host), h.Sum32())
}

// store creates the Secret, or replaces it with Upsert.
func (a *clusterAdd) store(ctx context.Context, s *corev1.Secret) (bool, error) {
	err := a.Home.Create(ctx, s)
	if err == nil {
		return false, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("store cluster Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	if !a.Upsert {
		return false, fmt.Errorf("cluster %s is registered already (Secret %s/%s); --upsert replaces it", s.Data["server"], s.Namespace, s.Name)
	}
	old := &corev1.Secret{}
	if err := a.Home.Get(ctx, client.ObjectKeyFromObject(s), old); err != nil {
		return false, fmt.Errorf("read cluster Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	s.ResourceVersion = old.ResourceVersion
	if err := a.Home.Update(ctx, s); err != nil {
		return false, fmt.Errorf("replace cluster Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return true, nil
}

func parseLabels(in []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range in {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE", l)
		}
		out[k] = v
	}
	return out, nil
}

func printClusterAdded(w io.Writer, res *clusterAdded) error {
	verb := "added"
	if res.Replaced {
		verb = "updated"
	}
	_, err := fmt.Fprintf(w, "Cluster '%s' %s as %s (Secret %s)\n", res.Server, verb, res.Name, res.Secret)
	return err
}
