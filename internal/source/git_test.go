package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	testfolder "github.com/wavecd/wavecd/internal/testenv/folder"
)

func TestResolveRevisions(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "", "")
	url := srv.URL + "/repo.git"
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	tests := map[string]struct {
		rev     string
		want    string
		wantErr string
	}{
		"empty is HEAD":    {rev: "", want: repo.second},
		"HEAD":             {rev: "HEAD", want: repo.second},
		"branch":           {rev: "dev", want: repo.dev},
		"full branch ref":  {rev: "refs/heads/main", want: repo.second},
		"annotated tag":    {rev: "v1.0.0", want: repo.annotated},
		"lightweight tag":  {rev: "light", want: repo.second},
		"full SHA":         {rev: repo.first, want: repo.first},
		"full SHA, upper":  {rev: strings.ToUpper(repo.first), want: repo.first},
		"unknown full SHA": {rev: strings.Repeat("0123456789", 4), wantErr: `no branch, tag or commit named "0123456789`},
		"short SHA":        {rev: repo.dev[:8], want: repo.dev},
		"unknown revision": {rev: "nope", wantErr: `no branch, tag or commit named "nope"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := repos.Resolve(t.Context(), url, tc.rev)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tc.rev, diff)
			}
			if again, err := repos.Resolve(t.Context(), url, tc.rev); err != nil || again != got {
				t.Errorf("Resolve(%q) again: %q, %v", tc.rev, again, err)
			}
		})
	}
}

func TestCheckoutReadsTheCommit(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "", "")
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	for rev, want := range map[string]string{"v1.0.0": "rev: first\n", "dev": "rev: dev\n", "main": "rev: second\n"} {
		tree, err := repos.Checkout(t.Context(), srv.URL+"/repo.git", rev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tree.ReadFile("app/cm.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: app/cm.yaml = %q, want %q", rev, got, want)
		}
	}
}

// A comparison pins its revision to a SHA and checks that out: a commit
// read before comes from memory, but only for the repository it was read
// from.
func TestCheckoutOfAPinnedCommit(t *testing.T) {
	repo := newTestRepo(t)
	served := filepath.Dir(repo.bare)
	otherWork := t.TempDir()
	runGit(t, otherWork, "init", "-q", "-b", "main")
	commitFiles(t, otherWork, "other", map[string]string{"other.yaml": "other: true\n"})
	runGit(t, served, "clone", "-q", "--bare", otherWork, "other.git")
	srv := serveGit(t, served, "", "")
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	byBranch, err := repos.Checkout(t.Context(), srv.URL+"/repo.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := repos.Checkout(t.Context(), srv.URL+"/repo.git", strings.ToUpper(repo.second))
	if err != nil {
		t.Fatal(err)
	}
	if pinned != byBranch {
		t.Errorf("the pinned commit was read again")
	}
	// A local repository whose refs can no longer be read resolves
	// nothing, but a commit read from it before still checks out.
	if _, err := repos.Checkout(t.Context(), repo.work, "main"); err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(repo.work, ".git", "refs")
	if err := os.RemoveAll(refs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(refs, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Resolve(t.Context(), repo.work, "main"); err == nil {
		t.Fatal("main resolved in a repository without refs")
	}
	if _, err := repos.Checkout(t.Context(), repo.work, repo.second); err != nil {
		t.Errorf("checkout of a commit read before: %v", err)
	}
	_, err = repos.Checkout(t.Context(), srv.URL+"/other.git", repo.second)
	if err == nil || !strings.Contains(err.Error(), "no branch, tag or commit named") {
		t.Errorf("a commit of repo.git checked out from other.git: err = %v", err)
	}
}

func TestConcurrentRefreshesFetchOnce(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "", "")
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			sha, err := repos.Resolve(t.Context(), srv.URL+"/repo.git", "main")
			if err == nil && sha != repo.second {
				err = errors.New("wrong sha " + sha)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Fetches.Load(); got != 1 {
		t.Errorf("fetches = %d, want 1", got)
	}
	// A refresh of an unchanged remote lists refs and fetches nothing.
	if _, err := repos.Resolve(t.Context(), srv.URL+"/repo.git", "main"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Fetches.Load(); got != 1 {
		t.Errorf("fetches after an unchanged refresh = %d, want 1", got)
	}
}

func TestNewCommitsAreSeenOnRefresh(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "", "")
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	url := srv.URL + "/repo.git"
	if _, err := repos.Resolve(t.Context(), url, "main"); err != nil {
		t.Fatal(err)
	}
	third := commitFiles(t, repo.work, "third", map[string]string{"app/cm.yaml": "rev: third\n"})
	runGit(t, repo.work, "push", "-q", repo.bare, "main")
	got, err := repos.Resolve(t.Context(), url, "main")
	if err != nil {
		t.Fatal(err)
	}
	if got != third {
		t.Errorf("main = %s after a push, want %s", got, third)
	}
}

func TestBasicAuth(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "robot", "s3cret-token")
	url := srv.URL + "/repo.git"
	tests := map[string]struct {
		creds   Credentials
		wantErr string
	}{
		"right password":    {creds: Credentials{{URL: url, Username: "robot", Password: "s3cret-token"}}},
		"repo-creds prefix": {creds: Credentials{{URL: srv.URL, Username: "robot", Password: "s3cret-token", Prefix: true}}},
		"no credentials":    {wantErr: "authentication required"},
		"wrong password":    {creds: Credentials{{URL: url, Username: "robot", Password: "wrong-password"}}, wantErr: "authentication required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			repos := NewRepos(ReposOptions{CacheDir: t.TempDir(), Credentials: tc.creds})
			_, err := repos.Resolve(t.Context(), url, "main")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "wrong-password") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestMirrorsAndLocalRepos(t *testing.T) {
	repo := newTestRepo(t)
	folder := t.TempDir()
	testfolder.Write(t, folder, map[string]string{"app/cm.yaml": "rev: folder\n"})
	mirrors := Mirrors{}
	mirrors.Add("https://github.com/acme/seed.git", repo.work)
	mirrors.Add("https://github.com/acme/plain", folder)
	repos := NewRepos(ReposOptions{Mirrors: mirrors})
	tests := map[string]struct {
		url, rev, want, wantRev string
	}{
		"mirror to a git repo":      {url: "https://github.com/acme/seed", rev: "dev", want: "rev: dev\n", wantRev: repo.dev},
		"mirror url with .git/":     {url: "https://GitHub.com/acme/seed.git/", rev: "v1.0.0", want: "rev: first\n", wantRev: repo.first},
		"mirror to a plain folder":  {url: "https://github.com/acme/plain", rev: "main", want: "rev: folder\n"},
		"file URL":                  {url: "file://" + repo.bare, rev: "HEAD", want: "rev: second\n", wantRev: repo.second},
		"local path":                {url: repo.work, rev: "light", want: "rev: second\n", wantRev: repo.second},
		"short SHA in a local repo": {url: repo.work, rev: repo.first[:7], want: "rev: first\n", wantRev: repo.first},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tree, err := repos.Checkout(t.Context(), tc.url, tc.rev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tree.ReadFile("app/cm.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if tree.Revision() != tc.wantRev {
				t.Errorf("revision = %q, want %q", tree.Revision(), tc.wantRev)
			}
		})
	}
}

func TestUnreachableRepoIsAnError(t *testing.T) {
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	_, err := repos.Checkout(t.Context(), "http://user:hunter22@127.0.0.1:1/repo.git", "main")
	if err == nil {
		t.Fatal("no error for an unreachable repository")
	}
	if strings.Contains(err.Error(), "hunter22") {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestLocalRepoSeesNewCommitsAndBranches(t *testing.T) {
	repo := newTestRepo(t)
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	for _, rev := range []string{"main", "main", "HEAD"} {
		if _, err := repos.Resolve(t.Context(), repo.work, rev); err != nil {
			t.Fatalf("resolve %s: %v", rev, err)
		}
	}
	runGit(t, repo.work, "checkout", "-q", "main")
	third := commitFiles(t, repo.work, "third", map[string]string{"app/cm.yaml": "rev: third\n"})
	runGit(t, repo.work, "branch", "feature/x")
	runGit(t, repo.work, "pack-refs", "--all")
	fourth := commitFiles(t, repo.work, "fourth", map[string]string{"app/cm.yaml": "rev: fourth\n"})
	cases := map[string]string{"main": fourth, "feature/x": third, third: third}
	for rev, want := range cases {
		got, err := repos.Resolve(t.Context(), repo.work, rev)
		if err != nil {
			t.Fatalf("resolve %s: %v", rev, err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", rev, got, want)
		}
	}
	tree, err := repos.Checkout(t.Context(), repo.work, "main")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tree.ReadFile("app/cm.yaml"); err != nil || string(b) != "rev: fourth\n" {
		t.Errorf("app/cm.yaml at main = %q, %v", b, err)
	}
}

// A resolution with a MaxAge answers from the refs listed within it and
// lists them again once they are older; one without lists them now.
func TestResolveReusesRecentRefs(t *testing.T) {
	repo := newTestRepo(t)
	srv := serveGit(t, filepath.Dir(repo.bare), "", "")
	repos := NewRepos(ReposOptions{CacheDir: t.TempDir()})
	remote := srv.URL + "/repo.git"
	for _, url := range []string{remote, repo.work} {
		if got, err := repos.Resolve(t.Context(), url, "main"); err != nil || got != repo.second {
			t.Fatalf("%s: main = %s, %v; want %s", url, got, err, repo.second)
		}
	}
	third := commitFiles(t, repo.work, "third", map[string]string{"app/cm.yaml": "rev: third\n"})
	runGit(t, repo.work, "push", "-q", repo.bare, "main")
	lists := srv.Lists.Load()
	tests := []struct {
		name   string
		url    string
		maxAge time.Duration
		want   string
	}{
		{"remote, listed within MaxAge", remote, time.Minute, repo.second},
		{"local, read within MaxAge", repo.work, time.Minute, repo.second},
		{"remote, listed longer ago", remote, time.Nanosecond, third},
		{"local, read longer ago", repo.work, time.Nanosecond, third},
		{"remote, listed again since", remote, time.Minute, third},
		{"local, read again since", repo.work, time.Minute, third},
	}
	for _, tc := range tests {
		got, err := repos.ResolveWith(t.Context(), tc.url, "main", ResolveOptions{MaxAge: tc.maxAge})
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: main = %s, want %s", tc.name, got, tc.want)
		}
		if tc.name == "remote, listed within MaxAge" && srv.Lists.Load() != lists {
			t.Errorf("%s: the remote was listed again", tc.name)
		}
	}
	if got, err := repos.ResolveWith(t.Context(), remote, "dev", ResolveOptions{MaxAge: time.Minute}); err != nil || got != repo.dev {
		t.Errorf("dev = %s, %v; want %s", got, err, repo.dev)
	}
}
