package server

import (
	"bytes"
	"testing"
)

// FuzzWebhookPayload parses any body as a GitHub push and matches it
// against apps: nothing panics, and a payload that parses names its ref
// and repository.
func FuzzWebhookPayload(f *testing.F) {
	f.Add([]byte(pushPayload))
	f.Add([]byte(`{"ref": "refs/tags/v1", "repository": {"html_url": "git@github.com:a/b.git"}, "commits": [{"added": ["../../x"]}]}`))
	f.Add([]byte(`{"ref": "", "repository": {}}`))
	f.Add([]byte(`[1, 2, {"ref": 3}]`))
	f.Add([]byte(`{"ref": "refs/heads/main", "repository": {"clone_url": "https://user:pass@github.com/a/b"}}`))
	apps := []string{"https://github.com/acme/seed.git", "git@github.com:acme/seed.git", "ssh://git@github.com/acme/seed", "/local/path"}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := parsePushEvent(bytes.NewReader(body))
		if err != nil {
			return
		}
		if ev.Ref == "" || ev.Repository.HTMLURL == "" && ev.Repository.CloneURL == "" {
			t.Fatalf("accepted a push without a ref or repository: %+v", ev)
		}
		p := newPush(ev)
		for _, repo := range apps {
			for _, rev := range []string{"main", "HEAD", "", "v1", "*"} {
				app := testApp("a", repo, rev)
				_ = p.affects(&app)
			}
		}
		_ = NormalizeRepoURL(ev.Repository.HTMLURL)
	})
}
