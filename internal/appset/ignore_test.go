package appset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestKeepIgnored(t *testing.T) {
	live := `{"metadata": {"name": "web", "annotations": {"example.com/owner": "me"}}, "spec": {"project": "default",
		"sources": [{"repoURL": "https://git.example.com/org/repo1", "targetRevision": "fix/bug-123"}, {"repoURL": "https://git.example.com/org/repo2", "targetRevision": "main"}],
		"syncPolicy": {"automated": {"selfHeal": true}}, "info": [{"name": "a/b", "value": "user"}]}}`
	want := `{"metadata": {"name": "web"}, "spec": {"project": "default",
		"sources": [{"repoURL": "https://git.example.com/org/repo1", "targetRevision": "main"}, {"repoURL": "https://git.example.com/org/repo2", "targetRevision": "v2"}],
		"destination": {"namespace": "web"}}}`
	tests := []struct {
		desc    string
		rules   []v1alpha1.ApplicationSetResourceIgnoreDifferences
		want    string
		wantErr string
	}{
		{
			desc: "no rules: the generated app wins",
			want: want,
		},
		{
			desc:  "a JSON pointer copies live's value, or removes what live lacks",
			rules: []v1alpha1.ApplicationSetResourceIgnoreDifferences{{JSONPointers: []string{"/spec/syncPolicy", "/spec/destination", "/spec/sources/0/targetRevision"}}},
			want: `{"metadata": {"name": "web"}, "spec": {"project": "default",
				"sources": [{"repoURL": "https://git.example.com/org/repo1", "targetRevision": "fix/bug-123"}, {"repoURL": "https://git.example.com/org/repo2", "targetRevision": "v2"}],
				"syncPolicy": {"automated": {"selfHeal": true}}}}`,
		},
		{
			desc:  "a jq path selecting one source by URL; other sources still update",
			rules: []v1alpha1.ApplicationSetResourceIgnoreDifferences{{JQPathExpressions: []string{`.spec.sources[] | select(.repoURL == "https://git.example.com/org/repo1").targetRevision`}}},
			want: `{"metadata": {"name": "web"}, "spec": {"project": "default",
				"sources": [{"repoURL": "https://git.example.com/org/repo1", "targetRevision": "fix/bug-123"}, {"repoURL": "https://git.example.com/org/repo2", "targetRevision": "v2"}],
				"destination": {"namespace": "web"}}}`,
		},
		{
			desc: "escaped pointer tokens and a rule for another app",
			rules: []v1alpha1.ApplicationSetResourceIgnoreDifferences{
				{JSONPointers: []string{"/spec/info", "/metadata/annotations/example.com~1owner"}},
				{Name: "api", JSONPointers: []string{"/spec/destination"}},
			},
			want: `{"metadata": {"name": "web", "annotations": {"example.com/owner": "me"}}, "spec": {"project": "default",
				"sources": [{"repoURL": "https://git.example.com/org/repo1", "targetRevision": "main"}, {"repoURL": "https://git.example.com/org/repo2", "targetRevision": "v2"}],
				"destination": {"namespace": "web"}, "info": [{"name": "a/b", "value": "user"}]}}`,
		},
		{
			desc:    "a pointer without a leading slash",
			rules:   []v1alpha1.ApplicationSetResourceIgnoreDifferences{{JSONPointers: []string{"spec"}}},
			wantErr: "does not start with /",
		},
		{
			desc:    "a jq syntax error",
			rules:   []v1alpha1.ApplicationSetResourceIgnoreDifferences{{JQPathExpressions: []string{".spec[["}}},
			wantErr: "jq path expression",
		},
	}
	for _, tt := range tests {
		l, _ := decodeTree([]byte(live))
		w, _ := decodeTree([]byte(want))
		got, err := keepIgnored(tt.rules, "web", l, w)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error = %v, want %q", tt.desc, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.desc, err)
		}
		expected, err := decodeTree([]byte(tt.want))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(expected, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.desc, diff)
		}
	}
}
