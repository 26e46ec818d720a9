package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
)

const (
	exampleRepo = "https://github.com/argoproj/argocd-example-apps.git"
	inCluster   = "https://kubernetes.default.svc"
)

func TestAppCreateFromFlags(t *testing.T) {
	base := []string{"create", "web", "--repo", exampleRepo, "--path", "guestbook", "--dest-server", inCluster, "--dest-namespace", "web"}
	source := &v1alpha1.ApplicationSource{RepoURL: exampleRepo, Path: "guestbook"}
	dest := v1alpha1.ApplicationDestination{Server: inCluster, Namespace: "web"}
	tests := map[string]struct {
		args           []string
		want           v1alpha1.ApplicationSpec
		wantLabels     map[string]string
		wantFinalizers []string
		wantErr        string
	}{
		"minimal": {
			args: base,
			want: v1alpha1.ApplicationSpec{Project: "default", Source: source, Destination: dest},
		},
		"automated with options": {
			args: append(base[:len(base):len(base)], "--project", "team-a", "--revision", "v1.2.0", "--sync-policy", "automated",
				"--auto-prune", "--self-heal", "--sync-option", "CreateNamespace=true", "--sync-option", "ServerSideApply=true"),
			want: v1alpha1.ApplicationSpec{
				Project:     "team-a",
				Source:      &v1alpha1.ApplicationSource{RepoURL: exampleRepo, Path: "guestbook", TargetRevision: "v1.2.0"},
				Destination: dest,
				SyncPolicy: &v1alpha1.SyncPolicy{
					Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
					SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true", "ServerSideApply=true"},
				},
			},
		},
		"helm chart to a named cluster": {
			args: []string{"create", "web", "--repo", "https://charts.example.com", "--helm-chart", "web", "--revision", "1.2.3",
				"--dest-name", "in-cluster", "--dest-namespace", "web", "--sync-policy", "auto", "--allow-empty"},
			want: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.2.3"},
				Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "web"},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{AllowEmpty: true}},
			},
		},
		"labels and finalizer": {
			args:           append(base[:len(base):len(base)], "-l", "team=a", "--label", "tier=web", "--set-finalizer"),
			want:           v1alpha1.ApplicationSpec{Project: "default", Source: source, Destination: dest},
			wantLabels:     map[string]string{"team": "a", "tier": "web"},
			wantFinalizers: []string{appclient.ResourcesFinalizer},
		},
		"auto-prune needs automated sync": {
			args: append(base[:len(base):len(base)], "--auto-prune"), wantErr: "cannot set --auto-prune: application not configured with automatic sync",
		},
		"invalid sync policy": {
			args: append(base[:len(base):len(base)], "--sync-policy", "sometimes"), wantErr: `invalid --sync-policy "sometimes"`,
		},
		"no source": {
			args: []string{"create", "web", "--dest-server", inCluster}, wantErr: `application "web" has no source`,
		},
		"no destination": {
			args: []string{"create", "web", "--repo", exampleRepo}, wantErr: `application "web" has no destination cluster`,
		},
		"bad label": {
			args: append(base[:len(base):len(base)], "-l", "team"), wantErr: `invalid --label "team": want KEY=VALUE`,
		},
		"no name": {args: []string{"create", "--repo", exampleRepo}, wantErr: "give the app's NAME, or -f FILE"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			out, _, err := runApp(t, ns, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out != "application 'web' created\n" {
				t.Errorf("stdout %q", out)
			}
			app := getApp(t, c, ns, "web")
			if diff := cmp.Diff(tc.want, app.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, app.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, app.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppCreateUpsert creates one app again and again.
func TestAppCreateUpsert(t *testing.T) {
	ns, c := appCluster(t)
	create := []string{"create", "web", "--repo", exampleRepo, "--path", "guestbook", "--dest-server", inCluster, "--dest-namespace", "web"}
	steps := []struct {
		name    string
		extra   []string
		wantOut string
		wantErr string
	}{
		{name: "first create", wantOut: "application 'web' created\n"},
		{name: "same spec again", wantOut: "application 'web' unchanged\n"},
		{name: "other spec without upsert", extra: []string{"--revision", "v2"}, wantErr: `application "web" in namespace "` + ns + `" exists with a different spec: use --upsert`},
		{name: "other spec with upsert", extra: []string{"--revision", "v2", "--upsert"}, wantOut: "application 'web' updated\n"},
	}
	for _, st := range steps {
		out, _, err := runApp(t, ns, append(create[:len(create):len(create)], st.extra...)...)
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("%s: error %v, want one containing %q", st.name, err, st.wantErr)
			}
			continue
		}
		if err != nil || out != st.wantOut {
			t.Fatalf("%s: %q, %v; want %q", st.name, out, err, st.wantOut)
		}
	}
	if rev := getApp(t, c, ns, "web").Spec.Source.TargetRevision; rev != "v2" {
		t.Errorf("after upsert targetRevision = %q, want v2", rev)
	}
}

// TestAppCreateFromFileKeepsUnknownFields creates apps from a manifest and
// edits one: fields wavecd does not model survive both.
func TestAppCreateFromFileKeepsUnknownFields(t *testing.T) {
	ns, c := appCluster(t)
	out, errOut, err := runApp(t, ns, "create", "-f", "testdata/app/create.yaml")
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut)
	}
	if want := "application 'hydrated' created\napplication 'plain' created\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if _, _, err := runApp(t, ns, "set", "hydrated", "--revision", "v3"); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ApplicationKind))
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "hydrated"}, u); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{"spec", "sourceHydrator", "drySource", "path"}, {"spec", "source", "futureField"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); !found {
			t.Errorf("field %v was lost", path)
		}
	}
	if rev, _, _ := unstructured.NestedString(u.Object, "spec", "source", "targetRevision"); rev != "v3" {
		t.Errorf("targetRevision = %q, want v3", rev)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status"); found {
		t.Error("the status of the manifest was created; a new app has none")
	}
}

func TestAppCreateFileErrors(t *testing.T) {
	ns, _ := appCluster(t)
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"name differs from the file": {[]string{"create", "other", "-f", "testdata/app/create.yaml"}, `NAME "other" does not match metadata.name`},
		"file and spec flags":        {[]string{"create", "-f", "testdata/app/create.yaml", "--repo", exampleRepo}, "cannot be combined with -f"},
		"missing file":               {[]string{"create", "-f", "testdata/app/nope.yaml"}, "nope.yaml"},
		"other namespace": {
			[]string{"create", "-f", "testdata/app/other-namespace.yaml"},
			`application "elsewhere" declares namespace "team-b", not "` + ns + `": pass -n team-b`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := runApp(t, ns, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestAppSet(t *testing.T) {
	tests := map[string]struct {
		app     string
		args    []string
		edit    func(spec *v1alpha1.ApplicationSpec) // what the command should change
		wantErr string
	}{
		"revision and path": {
			app: "guestbook", args: []string{"--revision", "v2", "--path", "guestbook-v2"},
			edit: func(s *v1alpha1.ApplicationSpec) { s.Source.TargetRevision, s.Source.Path = "v2", "guestbook-v2" },
		},
		"turn on automated sync": {
			app: "guestbook", args: []string{"--sync-policy", "automated", "--self-heal"},
			edit: func(s *v1alpha1.ApplicationSpec) {
				s.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{SelfHeal: true}
			},
		},
		"turn off automated sync": {
			app: "root", args: []string{"--sync-policy", "none"},
			edit: func(s *v1alpha1.ApplicationSpec) { s.SyncPolicy = nil },
		},
		"remove the last sync option": {
			app: "guestbook", args: []string{"--sync-option", "!CreateNamespace=true"},
			edit: func(s *v1alpha1.ApplicationSpec) { s.SyncPolicy = nil },
		},
		"destination": {
			app: "guestbook", args: []string{"--dest-namespace", "gb", "--project", "team-a"},
			edit: func(s *v1alpha1.ApplicationSpec) { s.Destination.Namespace, s.Project = "gb", "team-a" },
		},
		"self-heal needs automated sync": {app: "guestbook", args: []string{"--self-heal"}, wantErr: "cannot set --self-heal"},
		"source flags on a multi-source app": {
			app: "broken", args: []string{"--revision", "2.0.0"}, wantErr: "the application has several sources",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, tc.app)
			before := getApp(t, c, ns, tc.app)
			out, _, err := runApp(t, ns, append([]string{"set", tc.app}, tc.args...)...)
			after := getApp(t, c, ns, tc.app)
			want := before.Spec.DeepCopy()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
			} else {
				if err != nil || out != "application '"+tc.app+"' updated\n" {
					t.Fatalf("%q, %v", out, err)
				}
				tc.edit(want)
			}
			if diff := cmp.Diff(*want, after.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Status, after.Status); diff != "" {
				t.Errorf("status changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAppDelete(t *testing.T) {
	tests := map[string]struct {
		finalizers     []string // on the app before the delete
		args           []string
		wantGone       bool
		wantFinalizers []string
		wantErr        string
	}{
		"cascade by default adds the finalizer": {
			args: []string{"--yes"}, wantFinalizers: []string{appclient.ResourcesFinalizer},
		},
		"background propagation": {
			finalizers: []string{appclient.ResourcesFinalizer},
			args:       []string{"--yes", "-p", "background"}, wantFinalizers: []string{appclient.BackgroundResourcesFinalizer},
		},
		"other finalizers stay": {
			finalizers: []string{"example.com/keep"},
			args:       []string{"--yes"}, wantFinalizers: []string{"example.com/keep", appclient.ResourcesFinalizer},
		},
		"no cascade removes the finalizer": {
			finalizers: []string{appclient.ResourcesFinalizer}, args: []string{"--cascade=false", "--wait", "--timeout", "30"}, wantGone: true,
		},
		"no cascade with a propagation policy": {
			args: []string{"--cascade=false", "-p", "background"}, wantErr: "cannot set a propagation policy when cascading is disabled",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, c := appCluster(t)
			createFixtures(t, c, ns, "guestbook")
			app := getApp(t, c, ns, "guestbook")
			orig := app.DeepCopy()
			app.Finalizers = tc.finalizers
			if err := c.Patch(t.Context(), app, client.MergeFrom(orig)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { releaseApp(t, c, ns, "guestbook") })
			out, _, err := runApp(t, ns, append([]string{"delete", "guestbook"}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || out != "application '"+ns+"/guestbook' deleted\n" {
				t.Fatalf("%q, %v", out, err)
			}
			after := &v1alpha1.Application{}
			err = c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "guestbook"}, after)
			if tc.wantGone {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("app still there (%v), want it gone", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if after.DeletionTimestamp == nil {
				t.Error("app not marked for deletion")
			}
			if diff := cmp.Diff(tc.wantFinalizers, after.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// releaseApp drops an app's finalizers, as the controller would once the
// app's objects are gone, so the test namespace can be deleted.
func releaseApp(t *testing.T, c client.Client, ns, name string) {
	app := &v1alpha1.Application{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		return
	}
	orig := app.DeepCopy()
	app.Finalizers = nil
	_ = c.Patch(t.Context(), app, client.MergeFrom(orig))
}
