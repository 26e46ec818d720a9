package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	stdsync "sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/cluster"
	"github.com/wavecd/wavecd/internal/rbac"
)

// clusterRoutes are Argo CD's ClusterService reads.
func (a *API) clusterRoutes() {
	a.mux.HandleFunc("GET /api/v1/clusters", a.authed(a.listClusters))
	a.mux.HandleFunc("GET /api/v1/clusters/{server}", a.authed(a.getCluster))
	// A query naming the cluster by ?server= or ?name= (as Argo CD's
	// ClusterQuery without an id) comes with an empty id.
	a.mux.HandleFunc("GET /api/v1/clusters/{$}", a.authed(a.getCluster))
}

// clusterView is Argo CD's Cluster as its API shows it: no credentials.
type clusterView struct {
	Server           string            `json:"server"`
	Name             string            `json:"name"`
	Config           clusterConfigView `json:"config"`
	Namespaces       []string          `json:"namespaces,omitempty"`
	ClusterResources bool              `json:"clusterResources,omitempty"`
	Project          string            `json:"project,omitempty"`
	Shard            *int64            `json:"shard,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	Info             clusterInfo       `json:"info"`
	ServerVersion    string            `json:"serverVersion,omitempty"`
	ConnectionState  connectionState   `json:"connectionState"`
}

type clusterConfigView struct {
	TLSClientConfig struct {
		Insecure   bool   `json:"insecure"`
		ServerName string `json:"serverName,omitempty"`
	} `json:"tlsClientConfig"`
	AWSAuthConfig      *cluster.AWSAuthConfig `json:"awsAuthConfig,omitempty"`
	DisableCompression bool                   `json:"disableCompression,omitempty"`
	ProxyURL           string                 `json:"proxyUrl,omitempty"`
}

type clusterInfo struct {
	ConnectionState   connectionState `json:"connectionState"`
	ServerVersion     string          `json:"serverVersion,omitempty"`
	ApplicationsCount int64           `json:"applicationsCount"`
}

type connectionState struct {
	Status      string    `json:"status"`
	Message     string    `json:"message,omitempty"`
	AttemptedAt time.Time `json:"attemptedAt"`
}

// clusterObject is a cluster's RBAC object, as Argo CD names it.
func clusterObject(c *cluster.Cluster) string {
	if c.Project != "" {
		return c.Project + "/" + c.Server
	}
	return c.Server
}

// listClusters is GET /api/v1/clusters (?server=, ?name=): the clusters
// the user may get, each probed for its version.
func (a *API) listClusters(w http.ResponseWriter, r *http.Request, s *session) {
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	clusters, err := a.clusters().List(r.Context())
	if err != nil && clusters == nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	q := r.URL.Query()
	var keep []cluster.Cluster
	for i := range clusters {
		c := &clusters[i]
		if (q.Get("server") == "" || q.Get("server") == c.Server) && (q.Get("name") == "" || q.Get("name") == c.Name) &&
			enf.Allowed(s.subject(), rbac.ResourceClusters, rbac.ActionGet, clusterObject(c)) {
			keep = append(keep, *c)
		}
	}
	items, err := a.clusterViews(r.Context(), keep)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeList(w, nil, items)
}

// getCluster is GET /api/v1/clusters/{server}: by URL, or by name with
// ?id.type=name. A cluster the user may not get, or that does not exist,
// is a 403, as in Argo CD.
func (a *API) getCluster(w http.ResponseWriter, r *http.Request, s *session) {
	id, byName := r.PathValue("server"), false
	if q := r.URL.Query(); id == "" {
		id, byName = q.Get("server"), q.Get("server") == ""
		if byName {
			id = q.Get("name")
		}
	}
	switch t := r.URL.Query().Get("id.type"); t {
	case "", "url", "server":
	case "name":
		byName = true
	case "name_escaped":
		name, err := url.QueryUnescape(id)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("invalid escaped name %q: %w", id, err))
			return
		}
		id, byName = name, true
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("unknown id.type %q: use url, name or name_escaped", t))
		return
	}
	enf, err := a.enforcer(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	var c *cluster.Cluster
	if byName {
		c, err = a.clusters().ByName(r.Context(), id)
	} else {
		c, err = a.clusters().ByServer(r.Context(), id)
	}
	if err != nil || !enf.Allowed(s.subject(), rbac.ResourceClusters, rbac.ActionGet, clusterObject(c)) {
		writeError(w, http.StatusForbidden, errors.New("permission denied"))
		return
	}
	views, err := a.clusterViews(r.Context(), []cluster.Cluster{*c})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, views[0])
}

func (a *API) clusters() cluster.Registry {
	return cluster.Registry{Reader: a.opts.Kube, Namespace: a.opts.Namespace}
}

// clusterViews shows clusters without their credentials, with the number
// of apps that deploy to each and a probe of its API server's version.
func (a *API) clusterViews(ctx context.Context, clusters []cluster.Cluster) ([]clusterView, error) {
	counts, err := a.appsPerCluster(ctx, clusters)
	if err != nil {
		return nil, err
	}
	views := make([]clusterView, len(clusters))
	var wg stdsync.WaitGroup
	for i := range clusters {
		c := &clusters[i]
		v := clusterView{Server: c.Server, Name: c.Name, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources,
			Project: c.Project, Shard: c.Shard, Labels: c.Labels, Annotations: c.Annotations}
		v.Config.TLSClientConfig.Insecure = c.Config.TLSClientConfig.Insecure
		v.Config.TLSClientConfig.ServerName = c.Config.TLSClientConfig.ServerName
		v.Config.AWSAuthConfig, v.Config.DisableCompression, v.Config.ProxyURL = c.Config.AWSAuthConfig, c.Config.DisableCompression, c.Config.ProxyURL
		v.Info.ApplicationsCount = counts[c.Server]
		views[i] = v
		wg.Go(func() {
			state, version := a.probeCluster(ctx, c)
			if counts[c.Server] == 0 {
				// As Argo CD, whose controller watches only the clusters
				// apps deploy to.
				state.Status, state.Message = "Unknown", "Cluster has no applications and is not being monitored."
			}
			views[i].Info.ConnectionState, views[i].Info.ServerVersion = state, version
			views[i].ConnectionState, views[i].ServerVersion = state, version
		})
	}
	wg.Wait()
	return views, nil
}

// probeCluster asks a cluster's API server for its version, within 5s.
func (a *API) probeCluster(ctx context.Context, c *cluster.Cluster) (connectionState, string) {
	state := connectionState{AttemptedAt: time.Now().UTC().Truncate(time.Second)}
	version, err := a.serverVersion(ctx, c)
	if err != nil {
		state.Status, state.Message = "Failed", err.Error()
		return state, ""
	}
	state.Status = "Successful"
	return state, version
}

// serverVersion is a cluster's version as Argo CD shows it, from its
// /version: MAJOR.MINOR.PATCH of gitVersion, or MAJOR.MINOR.
func (a *API) serverVersion(ctx context.Context, c *cluster.Cluster) (string, error) {
	cfg, err := c.RESTConfig(a.opts.RESTConfig)
	if err != nil {
		return "", err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 5 * time.Second
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	raw, err := d.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var v struct{ Major, Minor, GitVersion string }
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("read /version: %w", err)
	}
	if m := genericVersion.FindStringSubmatch(v.GitVersion); m != nil {
		return m[1], nil
	}
	return strings.TrimPrefix(v.Major+"."+v.Minor, "."), nil
}

// genericVersion finds the numbers of a version such as v1.36.3-rc.1.
var genericVersion = regexp.MustCompile(`^v?(\d+\.\d+(?:\.\d+)?)`)

// appsPerCluster counts the served apps deploying to each cluster's URL.
func (a *API) appsPerCluster(ctx context.Context, clusters []cluster.Cluster) (map[string]int64, error) {
	apps, err := a.servedApps(ctx)
	if err != nil {
		return nil, err
	}
	listing := cluster.Listing{All: clusters}
	counts := map[string]int64{}
	for _, app := range apps {
		if c, err := listing.Resolve(app.Spec.Destination); err == nil {
			counts[c.Server]++
		}
	}
	return counts, nil
}
