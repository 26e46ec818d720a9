package workloads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenTTL is how long a process's ServiceAccount token lives, as the
// kubelet's projected tokens; it is renewed after 80% of that.
const tokenTTL = time.Hour

// Files of a process's directory.
const (
	kubeconfigFile = "kubeconfig"
	tokenFile      = "token"
	caFile         = "ca.crt"
)

// credentials give processes what in-cluster configuration gives a pod: the
// API server, its CA and a token of the pod's ServiceAccount bound to the
// pod, as a kubeconfig whose token file is renewed in place.
type credentials struct {
	client kubernetes.Interface
	server string
	caData []byte
}

// write creates dir with the CA, a fresh token and the kubeconfig, and
// returns when the token should be renewed.
func (c credentials) write(ctx context.Context, p *corev1.Pod, dir string) (time.Time, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return time.Time{}, fmt.Errorf("create process directory: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, caFile), c.caData); err != nil {
		return time.Time{}, err
	}
	renew, err := c.renew(ctx, p, dir)
	if err != nil {
		return time.Time{}, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthority: filepath.Join(dir, caFile)}
	cfg.AuthInfos["pod"] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(dir, tokenFile)}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "pod", Namespace: p.Namespace}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, filepath.Join(dir, kubeconfigFile)); err != nil {
		return time.Time{}, fmt.Errorf("write process kubeconfig: %w", err)
	}
	return renew, nil
}

// renew requests a token for the pod's ServiceAccount, bound to the pod,
// replaces the token file and returns when to renew it again.
func (c credentials) renew(ctx context.Context, p *corev1.Pod, dir string) (time.Time, error) {
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(tokenTTL.Seconds())),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
	}}
	now := time.Now()
	got, err := c.client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("request a token for serviceaccount %s/%s: %w", p.Namespace, sa, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, tokenFile), []byte(got.Status.Token)); err != nil {
		return time.Time{}, err
	}
	ttl := got.Status.ExpirationTimestamp.Sub(now)
	return now.Add(ttl * 4 / 5), nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
