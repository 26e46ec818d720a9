package testenv

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavecd/wavecd/internal/render"
)

// Env is a running local cluster and clients for it.
type Env struct {
	Dir        string
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface
	Dynamic    dynamic.Interface
	// Wavecd is the wavecd binary process-backed pods run (Options.Wavecd),
	// else empty.
	Wavecd string
}

// Options shape a package's cluster; the zero value is the cluster Main
// starts.
type Options struct {
	// Nodes is the number of simulated nodes (default 2). Config replaces it.
	Nodes int
	// Config is a wavecd-localcluster config file (node groups, CNI mode,
	// process definitions), relative to the package directory.
	Config string
	// Args are more flags of `wavecd-localcluster start`, for example
	// --process NAME=COMMAND.
	Args []string
	// Wavecd builds bin/wavecd from the current source (under the build
	// lock) and makes it the executable of pods annotated
	// localcluster.wavecd.io/process: wavecd.
	Wavecd bool
}

var current *Env

// DebugEnv, set to anything, makes the tests log at debug level to stderr
// (every sync step, every drift found).
const DebugEnv = "WAVECD_TEST_DEBUG"

// Main starts a local cluster, runs the package's tests, stops the cluster
// and returns the exit code for os.Exit. A cluster that cannot start fails
// the whole package with the reason.
func Main(m *testing.M) int { return MainWith(m, Options{}) }

// MainWith is Main with a cluster shaped by o.
func MainWith(m *testing.M, o Options) int {
	if render.IsJsonnetChild() { // a Jsonnet evaluation started by the tests' own engine
		return render.RunJsonnetChild(os.Stdin, os.Stdout)
	}
	if err := render.EnableJsonnetChild(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: testenv: %v\n", err)
		return 1
	}
	if os.Getenv(DebugEnv) != "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	if Fuzzing() {
		return m.Run() // fuzz targets are pure: no cluster for each worker
	}
	env, stop, err := start(context.Background(), o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: testenv: %v\n", err)
		return 1
	}
	current = env
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: testenv: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Fuzzing reports whether the test binary runs fuzz targets (go test
// -fuzz, or one of its workers), which need no cluster: with -fuzz, -run
// selects no other test.
func Fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

func start(ctx context.Context, o Options) (*Env, func() error, error) {
	bin, args, wavecd, err := prepare(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "wavecd-testenv-")
	if err != nil {
		return nil, nil, fmt.Errorf("create cluster directory: %w", err)
	}
	p, err := startCluster(ctx, startOptions{Binary: bin, Dir: dir, Args: args, Timeout: 3 * time.Minute})
	if err != nil {
		return nil, nil, err
	}
	stop := func() error {
		err := p.stop()
		if err == nil {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	env, err := newEnv(dir)
	if err != nil {
		_ = stop()
		return nil, nil, err
	}
	env.Wavecd = wavecd
	return env, stop, nil
}

// prepare builds what o needs and returns the wavecd-localcluster binary,
// the arguments of its start command after --dir, and the wavecd binary.
func prepare(ctx context.Context, o Options) (bin string, args []string, wavecd string, err error) {
	bin = os.Getenv("WAVECD_LOCALCLUSTER")
	var root string
	if bin == "" || o.Wavecd {
		if root, err = RepoRoot(); err != nil {
			return "", nil, "", err
		}
	}
	if bin == "" {
		if bin, err = BuildLocalCluster(ctx, root); err != nil {
			return "", nil, "", err
		}
	}
	if o.Wavecd {
		if wavecd, err = BuildWavecd(ctx, root); err != nil {
			return "", nil, "", err
		}
	}
	args, err = startArgs(o, wavecd)
	return bin, args, wavecd, err
}

// startArgs are the flags of `wavecd-localcluster start` after --dir.
func startArgs(o Options, wavecd string) ([]string, error) {
	var args []string
	if o.Config != "" {
		abs, err := filepath.Abs(o.Config)
		if err != nil {
			return nil, fmt.Errorf("resolve cluster config: %w", err)
		}
		args = []string{"--config", abs}
	} else {
		args = []string{"--nodes", strconv.Itoa(cmp.Or(o.Nodes, 2))}
	}
	if wavecd != "" {
		args = append(args, "--process", "wavecd="+wavecd)
	}
	return append(args, o.Args...), nil
}

func newEnv(dir string) (*Env, error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client: %w", err)
	}
	return &Env{Dir: dir, Kubeconfig: kubeconfig, Config: cfg, Client: client, Dynamic: dyn}, nil
}

// Get returns the package's cluster; a package whose TestMain did not call
// Main fails here.
func Get(t testing.TB) *Env {
	t.Helper()
	if current == nil {
		t.Fatal("testenv: no local cluster; call os.Exit(testenv.Main(m)) from TestMain")
	}
	return current
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for this test, waits until pods can be
// created in it (its default ServiceAccount exists) and deletes it when the
// test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = base[:50]
	}
	name := strings.Trim(base, "-") + "-" + hex.EncodeToString(suffix)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"wavecd.io/test": "true"}}}
	if _, err := e.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = e.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := e.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return name
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s: default ServiceAccount not created within 30s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
