package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startSidecar serves the fixture plugin file as `wavecd cmp-server` would,
// on a socket in dir, until the test ends.
func startSidecar(t *testing.T, dir, file string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "plugins", file))
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, &Service{Config: cfgs[0], BaseEnv: []string{"PATH=" + os.Getenv("PATH"), "SIDECAR=yes"}}, dir)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar: %v", err)
		}
	})
	sock := SocketPath(dir, cfgs[0])
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sidecar socket %s never appeared", sock)
		}
	}
}

func TestSidecar(t *testing.T) {
	dir, err := os.MkdirTemp("", "cmp") // short: a socket path has at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	startSidecar(t, dir, "env.yaml")
	startSidecar(t, dir, "cue.yaml")
	startSidecar(t, dir, "failing.yaml")
	set := NewSet(SetOptions{Dir: dir})
	tree := repoTree(t)

	out, used, err := set.Generate(t.Context(), "env-v1.0", &Request{AppPath: "apps/env", Env: appEnv(t, "apps/env")}, tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: web", `color: "blue-web"`, `init: "initialised"`, `files: "file.txt init.txt "`} {
		if !strings.Contains(out, want) {
			t.Errorf("sidecar output lacks %q:\n%s", want, out)
		}
	}
	if used != "env-v1.0" {
		t.Errorf("used = %q", used)
	}
	if got, err := set.Select(t.Context(), "", &Request{AppPath: "apps/cue"}, tree); err != nil || got != "cue" {
		t.Errorf("discovery through the sidecar = %q, %v; want cue", got, err)
	}
	if _, err := set.Select(t.Context(), "cue", &Request{AppPath: "apps/plain"}, tree); err == nil || !strings.Contains(err.Error(), `could not find cmp-server plugin with name "cue" supporting the given repository`) {
		t.Errorf("a sidecar whose discovery refuses: %v", err)
	}
	_, _, err = set.Generate(t.Context(), "failing", &Request{AppPath: "apps/plain"}, tree)
	if err == nil || !strings.Contains(err.Error(), "exit status 3: something broke") {
		t.Errorf("a failing sidecar plugin: %v, want its stderr", err)
	}
}
