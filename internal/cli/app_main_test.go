package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/install"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestMain starts the local cluster the app commands talk to. Times print
// in UTC so golden files do not depend on the machine's zone.
func TestMain(m *testing.M) {
	if os.Getenv(runAsCLIEnv) == "1" {
		os.Exit(runAsCLI())
	}
	time.Local = time.UTC
	os.Exit(testenv.Main(m))
}

var crdsOnce struct {
	sync.Once
	err error
}

// appCluster installs the CRDs once and returns a namespace for the test
// and a client for the cluster.
func appCluster(t *testing.T) (string, client.Client) {
	t.Helper()
	env := testenv.Get(t)
	crdsOnce.Do(func() {
		ext, err := apiextensions.NewForConfig(env.Config)
		if err == nil {
			_, err = install.InstallCRDs(t.Context(), ext, install.CRDOptions{})
		}
		crdsOnce.err = err
	})
	if crdsOnce.err != nil {
		t.Fatalf("install CRDs: %v", crdsOnce.err)
	}
	ac, err := appclient.New(env.Config, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return env.Namespace(t), ac.Kube
}

// createFixtures creates the named apps of testdata/app/fixtures.yaml (all
// when none are named) in ns, with their statuses.
func createFixtures(t *testing.T, c client.Client, ns string, names ...string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/app/fixtures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(bytes.ReplaceAll(raw, []byte("NAMESPACE"), []byte(ns))), 4096)
	created := 0
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(names) > 0 && !slices.Contains(names, u.GetName()) {
			continue
		}
		u.SetNamespace(ns)
		if err := c.Create(t.Context(), u); err != nil {
			t.Fatalf("create fixture %s: %v", u.GetName(), err)
		}
		created++
	}
	if len(names) > 0 && created != len(names) {
		t.Fatalf("created %d of the fixtures %v", created, names)
	}
}

// runApp runs `wavecd app ARGS` against the test cluster in ns.
func runApp(t *testing.T, ns string, args ...string) (string, string, error) {
	t.Helper()
	env := testenv.Get(t)
	return runCLI(t, append(append([]string{"app"}, args...), "--kubeconfig", env.Kubeconfig, "-n", ns)...)
}

var volatile = regexp.MustCompile(`(?m)("?(uid|resourceVersion|creationTimestamp)"?: )"?[^",\n]+"?`)

// normalize replaces the random suffix of the test namespace (keeping its
// length, so tables stay aligned) and server-assigned metadata.
func normalize(s, ns string) string {
	s = strings.ReplaceAll(s, ns, stableNamespace(ns))
	return volatile.ReplaceAllString(s, `${1}"X"`)
}

// stableNamespace is ns with its random suffix replaced by XXXXXX.
func stableNamespace(ns string) string {
	return ns[:len(ns)-6] + "XXXXXX"
}

func getApp(t *testing.T, c client.Client, ns, name string) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	return app
}

// opStep is one status.operationState a fake controller writes.
type opStep struct {
	phase   v1alpha1.OperationPhase
	message string
}

var (
	opStarted  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opFinished = opStarted.Add(42 * time.Second)
)

// playController plays the controller: it waits for the app's operation,
// then writes each step into status.operationState; the final step clears
// the operation, as Argo CD's controller does.
func playController(t *testing.T, c client.Client, ns, name string, steps ...opStep) {
	t.Helper()
	var op *v1alpha1.Operation
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		op = getApp(t, c, ns, name).Operation
		return op != nil, nil
	})
	if err != nil {
		t.Errorf("no operation written on %s: %v", name, err)
		return
	}
	for _, st := range steps {
		app := getApp(t, c, ns, name)
		orig := app.DeepCopy()
		state := &v1alpha1.OperationState{Operation: *op, Phase: st.phase, Message: st.message, StartedAt: metav1.NewTime(opStarted)}
		if st.phase.Completed() {
			state.FinishedAt = &metav1.Time{Time: opFinished}
			app.Operation = nil
		}
		app.Status.OperationState = state
		if err := c.Patch(t.Context(), app, client.MergeFrom(orig)); err != nil {
			t.Errorf("write operation state: %v", err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
