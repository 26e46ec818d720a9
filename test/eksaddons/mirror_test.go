package eksaddons

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// The upstream charts, as the Go module proxy serves their sources.
const (
	// calicoModule carries charts/tigera-operator (Calico's release-v3.28
	// branch: its values pin operator v1.34.13 and calicoctl v3.28.5);
	// the CRDs a packaged chart holds (a symlink the module zip drops)
	// are in libcalico-go/config/crd.
	calicoModule = "github.com/projectcalico/calico@v1.11.0-cni-plugin.0.20250813170300-a0db560f0520"
	// karpenterModule carries charts/karpenter (version 1.14.1); its
	// CRDs (a symlink in the repository) are in pkg/apis/crds.
	karpenterModule = "github.com/aws/karpenter-provider-aws@v1.15.0"
)

// Where the repository's charts say their dependencies come from.
const (
	calicoCharts    = "https://docs.tigera.io/calico/charts"
	eksCharts       = "https://aws.github.io/eks-charts"
	karpenterCharts = "oci://public.ecr.aws/karpenter"
)

// chartMirror serves the upstream charts the wrapper charts depend on:
// two index.yaml folders (Calico's and eks-charts' Helm repositories) and
// an OCI registry on loopback (Karpenter's public ECR). Mirrors are the
// URL=TARGET mirrors that point the repositories' URLs at them.
type chartMirror struct {
	Mirrors []string
	// Versions are the charts' versions, by chart name.
	Versions map[string]string
}

// newChartMirror packages the upstream charts from the module cache (and
// this corpus's own aws-load-balancer-controller chart) with Helm's own
// packaging, indexes them and pushes Karpenter's to a registry that runs
// until the test ends.
func newChartMirror(t *testing.T, corpus string) *chartMirror {
	t.Helper()
	m := &chartMirror{Versions: map[string]string{}}
	calico := moduleDir(t, calicoModule)
	tigera := copyChart(t, filepath.Join(calico, "charts", "tigera-operator"), filepath.Join(calico, "libcalico-go", "config", "crd"))
	calicoVersion := chartValue(t, tigera, "calicoctl", "tag") // the release the chart's values pin
	calicoDir := m.index(t, "calico", packageChart(t, tigera, calicoVersion))
	eksDir := m.index(t, "eks", packageChart(t, copyChart(t, filepath.Join(corpus, "upstream", "aws-load-balancer-controller"), ""), ""))
	karpenter := moduleDir(t, karpenterModule)
	karpenterChart := packageChart(t, copyChart(t, filepath.Join(karpenter, "charts", "karpenter"), filepath.Join(karpenter, "pkg", "apis", "crds")), "")
	host := serveRegistry(t)
	m.push(t, host, "karpenter", karpenterChart)
	m.Mirrors = []string{calicoCharts + "=" + calicoDir, eksCharts + "=" + eksDir, karpenterCharts + "=oci://" + host + "/karpenter"}
	return m
}

// moduleDir downloads a module@version into the module cache (once: it
// stays there) and returns its folder.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Dir == "" {
		t.Fatalf("go mod download %s: %v %s (the corpus takes upstream charts from the Go module cache)", module, err, info.Error)
	}
	return info.Dir
}

// copyChart copies a chart folder out of the read-only module cache, and
// the CRD files of crds (when set) into its crds/ folder, as the chart's
// release packaging does.
func copyChart(t *testing.T, src, crds string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy chart %s: %v", src, err)
	}
	if err := filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			err = os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[d.IsDir()])
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if crds == "" {
		return dst
	}
	if err := os.MkdirAll(filepath.Join(dst, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(crds, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", crds, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, "crds", filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// chartValue reads a string from a chart's values.yaml.
func chartValue(t *testing.T, chart string, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v any = map[string]any{}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, ok := v.(string)
	if !ok || s == "" {
		t.Fatalf("%s/values.yaml: %s is not a string", chart, strings.Join(path, "."))
	}
	return s
}

// packageChart packages a chart folder as `helm package --version` does
// and returns the archive's path.
func packageChart(t *testing.T, dir, version string) string {
	t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("load chart %s: %v", dir, err)
	}
	if version != "" {
		c.Metadata.Version, c.Metadata.AppVersion = version, version
	}
	archive, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatalf("package chart %s: %v", dir, err)
	}
	return archive
}

// index puts archive into a folder of its own with an index.yaml, as a
// Helm repository serves it, and returns the folder.
func (m *chartMirror) index(t *testing.T, name, archive string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(archive)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, filepath.Base(archive)), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	idx, err := repo.IndexDirectory(dir, "")
	if err == nil {
		err = idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)
	}
	if err != nil {
		t.Fatalf("index %s: %v", dir, err)
	}
	for name, versions := range idx.Entries {
		m.Versions[name] = versions[0].Version
	}
	return dir
}

// serveRegistry runs an OCI registry on 127.0.0.1 until the test ends and
// returns its host:port.
func serveRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))} //nolint:gosec // a test's loopback registry
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// push pushes a packaged chart to repository <host>/<path>/<name>:<version>
// as `helm push` does.
func (m *chartMirror) push(t *testing.T, host, path, archive string) {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	c, err := loader.LoadArchive(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	meta := c.Metadata
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptEnableCache(false))
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/%s/%s:%s", host, path, meta.Name, meta.Version)
	if _, err := client.Push(data, ref); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	m.Versions[meta.Name] = meta.Version
}
