package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/compare"
	"github.com/wavecd/wavecd/internal/testenv"
)

// TestSignedCommits: a project with signatureKeys syncs a commit signed by
// an allowed key of argocd-gpg-keys-cm; a later unsigned commit, or one
// signed by a key the ConfigMap lacks, is a ComparisonError naming the
// commit (and key), and the synced objects stay as they were.
func TestSignedCommits(t *testing.T) {
	t.Parallel()
	h := startController(t, Options{})
	alice, aliceArmored, aliceID := testenv.NewSigningKey(t, "alice")
	mallory, _, malloryID := testenv.NewSigningKey(t, "mallory")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: compare.GPGKeysConfigMap, Namespace: h.ns}, Data: map[string]string{aliceID: aliceArmored}}
	if err := h.c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	h.createProject("signed", v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anywhere,
		SignatureKeys: []v1alpha1.SignatureKey{{KeyID: aliceID}}})
	repo := testenv.NewGitRepo(t, map[string]string{"guestbook/cm.yaml": guestbookConfigMap})
	repo.SignedCommit(map[string]string{"guestbook/README": "signed\n"}, "signed by alice", alice)
	h.create(testApp{name: "guestbook", repoURL: repo.Dir, project: "signed", automated: true})
	h.waitApp("guestbook", 60*time.Second, "synced from the signed commit", syncedHealthy)

	for _, step := range []struct {
		name   string
		commit func() string
		want   func(sha string) string
	}{
		{"unsigned", func() string {
			return repo.Commit(map[string]string{"guestbook/cm.yaml": strings.Replace(guestbookConfigMap, "blue", "green", 1)}, "unsigned")
		}, func(sha string) string {
			return "Target revision " + sha + " in Git is not signed, but a signature is required"
		}},
		{"signed by a key not in the keyring", func() string {
			return repo.SignedCommit(map[string]string{"guestbook/cm.yaml": strings.Replace(guestbookConfigMap, "blue", "red", 1)}, "by mallory", mallory)
		}, func(sha string) string {
			return "revision " + sha + " is signed with key " + malloryID + ", which is not in argocd-gpg-keys-cm"
		}},
	} {
		sha := step.commit()
		h.refresh("guestbook")
		want := step.want(sha)
		h.waitApp("guestbook", 60*time.Second, step.name+": "+want, func(a *v1alpha1.Application) bool {
			return slices.ContainsFunc(a.Status.Conditions, func(c v1alpha1.ApplicationCondition) bool {
				return c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, want)
			})
		})
		if got := color(t, h); got != "blue" {
			t.Fatalf("%s: color %q, want blue: nothing of an unverified commit is synced", step.name, got)
		}
	}
}
