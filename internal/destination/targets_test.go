package destination

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

// listCounter counts the listings of cluster Secrets and finds none (the
// in-cluster destination is implicit); during runs amid the next listing.
type listCounter struct {
	client.Reader
	lists  int
	during func()
}

func (l *listCounter) List(context.Context, client.ObjectList, ...client.ListOption) error {
	l.lists++
	if f := l.during; f != nil {
		l.during = nil
		f()
	}
	return nil
}

// TestResolveReusesListing: Resolve lists the cluster Secrets for each
// app unless they are followed; followed, once until the next Prune (which
// lists them too), and a listing a Prune overtook is not kept. Steps:
// r resolves, p prunes, a resolves with a Prune amid its listing.
func TestResolveReusesListing(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: cluster.InClusterServer}}}
	for name, tc := range map[string]struct {
		follow bool
		steps  string
		lists  int
	}{
		"not followed: a listing each":        {steps: "rrr", lists: 3},
		"not followed, pruned":                {steps: "rprr", lists: 4},
		"followed: one listing":               {follow: true, steps: "rrr", lists: 1},
		"a Prune drops the listing":           {follow: true, steps: "rrprr", lists: 3},
		"two Prunes":                          {follow: true, steps: "rpprr", lists: 4},
		"a Prune amid a listing: not kept":    {follow: true, steps: "arr", lists: 1 + 1 + 1},
		"after a Prune amid a listing, reuse": {follow: true, steps: "arrrr", lists: 3},
	} {
		t.Run(name, func(t *testing.T) {
			reader := &listCounter{}
			ts, err := NewTargets(&rest.Config{Host: "https://127.0.0.1:1"}, cluster.Registry{Reader: reader, Namespace: "argocd"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.follow {
				ts.FollowClusters()
			}
			for _, step := range strings.Split(tc.steps, "") {
				switch step {
				case "a":
					reader.during = func() { _ = ts.Prune(context.Background()) }
					fallthrough
				case "r":
					c, tgt, err := ts.Resolve(context.Background(), app)
					if err != nil || tgt != ts.Local() || !c.IsInCluster() {
						t.Fatalf("resolve: %v, %v, %v; want the local target", c, tgt, err)
					}
				case "p":
					if err := ts.Prune(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			if reader.lists != tc.lists {
				t.Errorf("the Secrets were listed %d times, want %d", reader.lists, tc.lists)
			}
		})
	}
}
