package plugin

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	const head = "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\n"
	tests := map[string]struct {
		data      string
		wantNames []string
		wantErr   string
	}{
		"name with version":   {data: head + "metadata: {name: nix}\nspec: {version: v1.0, generate: {command: [cat]}}\n", wantNames: []string{"nix-v1.0"}},
		"name alone":          {data: head + "metadata: {name: kasane}\nspec: {generate: {command: [kasane, show]}}\n", wantNames: []string{"kasane"}},
		"ConfigMap carrying":  {data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  plugin.yaml: |\n    " + strings.ReplaceAll(head, "\n", "\n    ") + "metadata: {name: p}\n    spec: {generate: {command: [cat]}}\n", wantNames: []string{"p"}},
		"other kinds skipped": {data: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\n" + head + "metadata: {name: a}\nspec: {generate: {command: [cat]}}\n", wantNames: []string{"a"}},
		"no generate":         {data: head + "metadata: {name: p}\nspec: {init: {command: [cat]}}\n", wantErr: "test:1: invalid plugin configuration: spec.generate.command should be non-empty"},
		"no name":             {data: head + "spec: {generate: {command: [cat]}}\n", wantErr: "metadata.name should be non-empty"},
		"unknown field":       {data: head + "metadata: {name: p}\nspec: {generate: {command: [cat]}, discovery: {fileName: x}}\n", wantErr: `test:1: invalid plugin configuration: unknown field "discovery"`},
		"second document":     {data: head + "metadata: {name: a}\nspec: {generate: {command: [cat]}}\n---\n" + head + "metadata: {name: b}\nspec: {}\n", wantErr: "test:6: invalid plugin configuration"},
		"parameters":          {data: head + "metadata: {name: p}\nspec:\n  generate: {command: [cat]}\n  parameters:\n    static: [{name: size, string: small, tooltip: how big}]\n    dynamic: {command: [echo, '[]']}\n", wantNames: []string{"p"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfgs, err := Parse("test", []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cfgs {
				got = append(got, c.Name())
			}
			if diff := cmp.Diff(tc.wantNames, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnounce(t *testing.T) {
	cfgs, err := Parse("test", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: {command: [cat]}\n  parameters:\n    static: [{name: size, string: small}]\n    dynamic: {command: [sh, -c, 'echo \"[{\\\"name\\\": \\\"from-$ARGOCD_APP_NAME\\\"}]\"']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	svc := &Service{Config: cfgs[0], BaseEnv: baseEnv()}
	var got []Announcement
	err = withRepo(t.Context(), repoTree(t), func(r io.Reader) error {
		got, err = svc.Announce(t.Context(), &Request{AppPath: "apps/env", Env: []string{"ARGOCD_APP_NAME=web"}}, r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Announcement{{Name: "from-web"}, {Name: "size", String: "small"}}, got); diff != "" {
		t.Errorf("announcements (-want +got):\n%s", diff)
	}
}
