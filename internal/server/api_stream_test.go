package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// openStream opens the application stream with a query and returns its
// events as (type, app name), until the stream ends.
func openStream(t *testing.T, h *apiHarness, token, query string) <-chan [2]string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", h.base+"/api/v1/stream/applications?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := h.httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Result struct {
					Type        string               `json:"type"`
					Application v1alpha1.Application `json:"application"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Errorf("event %q: %v", line, err)
				continue
			}
			events <- [2]string{ev.Result.Type, ev.Result.Application.Name}
		}
		close(events)
	}()
	return events
}

// nextEvent is the stream's next event, within a time.
func nextEvent(t *testing.T, events <-chan [2]string, within time.Duration) [2]string {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
	}
	return [2]string{}
}

// TestAPIStreamAfterDelete: a client that deletes an app and then
// watches it for its DELETED event (argocd app delete --wait) gets it
// even when the app is gone before the watch starts; a watch of an app
// that was never deleted gets no such event.
func TestAPIStreamAfterDelete(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	admin := h.admin()
	if r := h.do("DELETE", "/api/v1/applications/guestbook?cascade=false", admin, nil); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return h.do("GET", "/api/v1/applications/guestbook?project=default", admin, nil).status == http.StatusNotFound, nil
	})
	if err != nil {
		t.Fatalf("guestbook is not gone: %v", err)
	}
	if e := nextEvent(t, openStream(t, h, admin, "name=guestbook"), 5*time.Second); e != [2]string{"DELETED", "guestbook"} {
		t.Errorf("stream of the deleted app: %v, want DELETED guestbook first", e)
	}
	events := openStream(t, h, admin, "name=later")
	h.apply("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: later}\nspec:\n  project: default\n" +
		"  source: {repoURL: https://git.example/later.git, path: later}\n  destination: {server: https://kubernetes.default.svc, namespace: later}\n")
	if e := nextEvent(t, events, 5*time.Second); e != [2]string{"ADDED", "later"} {
		t.Errorf("stream of an app created after it started: %v, want ADDED later first", e)
	}
}

func TestAPIStream(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	h.applyFixtures()
	alice := h.login("alice", alicePassword)
	events := openStream(t, h, alice, "selector=team%3Da")
	next := func(within time.Duration) [2]string {
		t.Helper()
		return nextEvent(t, events, within)
	}
	var added []string
	for range 2 {
		e := next(5 * time.Second)
		if e[0] != "ADDED" {
			t.Fatalf("event %v, want ADDED first", e)
		}
		added = append(added, e[1])
	}
	slices.Sort(added)
	if !slices.Equal(added, []string{"child", "guestbook"}) {
		t.Errorf("added %v", added)
	}
	app := h.app("guestbook")
	patch := client.MergeFrom(app.DeepCopy())
	app.Status.Health.Status = "Degraded"
	if err := h.kube.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	if e := next(time.Second); e != [2]string{"MODIFIED", "guestbook"} {
		t.Errorf("event %v, want MODIFIED guestbook within a second", e)
	}
}
