package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Media types of a Helm chart in an OCI registry.
const (
	ociManifestType = "application/vnd.oci.image.manifest.v1+json"
	helmConfigType  = "application/vnd.cncf.helm.config.v1+json"
	helmChartType   = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ociRegistry implements the read side of the OCI distribution API (ping,
// tag list, manifests by tag or digest, blobs) on 127.0.0.1, over plain
// HTTP, optionally behind basic auth. It serves what push stored.
type ociRegistry struct {
	Host       string // 127.0.0.1:PORT
	user, pass string

	mu        sync.Mutex
	tags      map[string][]string          // repository -> tags in push order
	manifests map[string]map[string][]byte // repository -> tag or digest -> manifest
	blobs     map[string][]byte            // digest -> content
}

func serveOCI(t *testing.T, user, pass string) *ociRegistry {
	t.Helper()
	r := &ociRegistry{user: user, pass: pass, tags: map[string][]string{},
		manifests: map[string]map[string][]byte{}, blobs: map[string][]byte{}}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int    `json:"size"`
}

// push stores a packaged chart as repository:version, the way `helm push`
// lays it out: a config holding Chart.yaml's metadata and one chart layer.
func (r *ociRegistry) push(t *testing.T, repository, name, version string, archive []byte) {
	t.Helper()
	config, err := json.Marshal(map[string]string{"apiVersion": "v2", "name": name, "version": version})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociManifestType,
		"config": r.blob(helmConfigType, config),
		"layers": []ociDescriptor{r.blob(helmChartType, archive)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.store(repository, version, manifest)
}

// store serves manifest as repository:tag and by its digest, which it
// returns.
func (r *ociRegistry) store(repository, tag string, manifest []byte) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifests[repository] == nil {
		r.manifests[repository] = map[string][]byte{}
	}
	r.manifests[repository][tag] = manifest
	r.manifests[repository][digestOf(manifest)] = manifest
	r.tags[repository] = append(r.tags[repository], tag)
	return digestOf(manifest)
}

// pushFile pushes the chart archive path (named NAME-VERSION.tgz).
func (r *ociRegistry) pushFile(t *testing.T, repository, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".tgz")
	i := strings.LastIndex(base, "-")
	r.push(t, repository, base[:i], base[i+1:], data)
}

func (r *ociRegistry) blob(mediaType string, data []byte) ociDescriptor {
	d := digestOf(data)
	r.mu.Lock()
	r.blobs[d] = data
	r.mu.Unlock()
	return ociDescriptor{MediaType: mediaType, Digest: d, Size: len(data)}
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r *ociRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if u, p, ok := req.BasicAuth(); r.user != "" && (!ok || u != r.user || p != r.pass) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test registry"`)
		ociError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		ociError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", "read-only registry")
		return
	}
	p := strings.TrimPrefix(req.URL.Path, "/v2/")
	if p == "" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "{}")
		return
	}
	if repository, ok := strings.CutSuffix(p, "/tags/list"); ok {
		r.serveTags(w, repository)
		return
	}
	if i := strings.LastIndex(p, "/manifests/"); i > 0 {
		r.serveManifest(w, req, p[:i], p[i+len("/manifests/"):])
		return
	}
	if i := strings.LastIndex(p, "/blobs/"); i > 0 {
		r.serveBlob(w, req, p[i+len("/blobs/"):])
		return
	}
	ociError(w, http.StatusNotFound, "NAME_UNKNOWN", "no such endpoint")
}

func (r *ociRegistry) serveTags(w http.ResponseWriter, repository string) {
	r.mu.Lock()
	tags, ok := r.tags[repository]
	r.mu.Unlock()
	if !ok {
		ociError(w, http.StatusNotFound, "NAME_UNKNOWN", "repository not known")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"name": repository, "tags": tags})
}

func (r *ociRegistry) serveManifest(w http.ResponseWriter, req *http.Request, repository, ref string) {
	r.mu.Lock()
	data, ok := r.manifests[repository][ref]
	r.mu.Unlock()
	serveContent(w, req, ok, ociManifestType, data)
}

func (r *ociRegistry) serveBlob(w http.ResponseWriter, req *http.Request, digest string) {
	r.mu.Lock()
	data, ok := r.blobs[digest]
	r.mu.Unlock()
	serveContent(w, req, ok, "application/octet-stream", data)
}

// serveContent serves a manifest or blob, or "not found" unless found.
func serveContent(w http.ResponseWriter, req *http.Request, found bool, mediaType string, data []byte) {
	if !found {
		ociError(w, http.StatusNotFound, "NOT_FOUND", "no such manifest or blob")
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Docker-Content-Digest", digestOf(data))
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	if req.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}

func ociError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}
