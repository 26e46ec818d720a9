package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Argo CD's names for cluster Secrets and the in-cluster destination.
const (
	// LabelSecretType marks Argo CD's Secrets by kind.
	LabelSecretType = "argocd.argoproj.io/secret-type"
	// SecretTypeCluster is the LabelSecretType value of a cluster Secret.
	SecretTypeCluster = "cluster"
	// InClusterServer is the URL of the cluster the controller runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the name of the cluster the controller runs in.
	InClusterName = "in-cluster"
)

// Cluster is one registered destination cluster.
type Cluster struct {
	// Name is how Applications name the cluster (destination.name).
	Name string
	// Server is the API server URL (destination.server).
	Server string
	// Config holds the credentials and TLS settings.
	Config Config
	// Namespaces limits the cluster to these namespaces; empty means all.
	Namespaces []string
	// ClusterResources allows cluster-scoped objects when Namespaces is set.
	ClusterResources bool
	// Project scopes the cluster to one AppProject; empty means none.
	Project string
	// Shard pins the cluster to one controller shard; nil means any.
	Shard *int64
	// Labels and Annotations are the Secret's (empty for the implicit
	// in-cluster destination).
	Labels      map[string]string
	Annotations map[string]string
	// SecretName is the Secret the cluster was read from; empty for the
	// implicit in-cluster destination.
	SecretName string
}

// Config is the `config` key of a cluster Secret, in Argo CD's JSON.
type Config struct {
	Username           string              `json:"username,omitempty"`
	Password           string              `json:"password,omitempty"`
	BearerToken        string              `json:"bearerToken,omitempty"`
	TLSClientConfig    TLSClientConfig     `json:"tlsClientConfig"`
	AWSAuthConfig      *AWSAuthConfig      `json:"awsAuthConfig,omitempty"`
	ExecProviderConfig *ExecProviderConfig `json:"execProviderConfig,omitempty"`
	DisableCompression bool                `json:"disableCompression,omitempty"`
	ProxyURL           string              `json:"proxyUrl,omitempty"`
}

// TLSClientConfig holds the TLS settings; the data fields are PEM,
// base64-encoded in the JSON.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}

// AWSAuthConfig is Argo CD's EKS authentication; wavecd parses it but cannot
// use it (RESTConfig reports so).
type AWSAuthConfig struct {
	ClusterName string `json:"clusterName,omitempty"`
	RoleARN     string `json:"roleARN,omitempty"`
	Profile     string `json:"profile,omitempty"`
}

// ExecProviderConfig runs a command for credentials, like a kubeconfig's
// exec plugin.
type ExecProviderConfig struct {
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion,omitempty"`
	InstallHint string            `json:"installHint,omitempty"`
}

// hasCredentials reports whether the config says how to authenticate.
func (c Config) hasCredentials() bool {
	t := c.TLSClientConfig
	return c.BearerToken != "" || c.Username != "" || c.ExecProviderConfig != nil || c.AWSAuthConfig != nil ||
		len(t.CertData) > 0 || len(t.KeyData) > 0 || len(t.CAData) > 0
}

// SecretError reports a cluster Secret that cannot be read.
type SecretError struct {
	// Secret is the Secret's name.
	Secret string
	Err    error
}

func (e *SecretError) Error() string { return fmt.Sprintf("cluster Secret %s: %v", e.Secret, e.Err) }
func (e *SecretError) Unwrap() error { return e.Err }

// IsClusterSecret reports whether s is labelled as a cluster Secret.
func IsClusterSecret(s *corev1.Secret) bool {
	return s.Labels[LabelSecretType] == SecretTypeCluster
}

// FromSecret reads a cluster Secret. It does not check the label: the
// caller chose the Secret. Errors are *SecretError.
func FromSecret(s *corev1.Secret) (*Cluster, error) {
	fail := func(format string, args ...any) (*Cluster, error) {
		return nil, &SecretError{Secret: s.Name, Err: fmt.Errorf(format, args...)}
	}
	data := func(key string) string { return strings.TrimSpace(string(s.Data[key])) }
	c := &Cluster{
		Name: data("name"), Server: strings.TrimRight(data("server"), "/"), Project: data("project"),
		ClusterResources: data("clusterResources") == "true",
		Labels:           maps.Clone(s.Labels), Annotations: maps.Clone(s.Annotations), SecretName: s.Name,
	}
	if c.Server == "" {
		return fail("key server is missing")
	}
	if c.Name == "" && c.Server == InClusterServer {
		c.Name = InClusterName
	}
	if raw := s.Data["config"]; len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &c.Config); err != nil {
			return fail("key config is not valid JSON: %w", err)
		}
	}
	for _, ns := range strings.Split(data("namespaces"), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			c.Namespaces = append(c.Namespaces, ns)
		}
	}
	if v := data("shard"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fail("key shard %q is not an integer", v)
		}
		c.Shard = &n
	}
	return c, nil
}

// InCluster is the implicit destination of the cluster the controller runs
// in: it uses the controller's own credentials.
func InCluster() *Cluster {
	return &Cluster{Name: InClusterName, Server: InClusterServer}
}

// IsInCluster reports whether the cluster is reached with the controller's
// own credentials: the in-cluster URL with no credentials of its own.
func (c *Cluster) IsInCluster() bool {
	return c.Server == InClusterServer && !c.Config.hasCredentials()
}

// ErrNotFound is wrapped by lookups of a cluster that is not registered.
var ErrNotFound = errors.New("cluster not found")
