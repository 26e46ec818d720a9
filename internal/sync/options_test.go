package sync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/kube"
)

func TestParseSyncOptions(t *testing.T) {
	tests := map[string]struct {
		in      []string
		want    SyncOptions
		wantErr bool
	}{
		"none": {},
		"every option": {
			in: []string{
				"ServerSideApply=true", "PruneLast=true", "CreateNamespace=true", "ApplyOutOfSyncOnly=true",
				"Replace=true", "Force=true", "SkipDryRunOnMissingResource=true", "FailOnSharedResource=true",
				"RespectIgnoreDifferences=true", "Validate=false", "PrunePropagationPolicy=background",
			},
			want: SyncOptions{
				ServerSideApply: true, PruneLast: true, CreateNamespace: true, ApplyOutOfSyncOnly: true,
				Replace: true, Force: true, SkipDryRunOnMissingResource: true, FailOnSharedResource: true,
				RespectIgnoreDifferences: true, SkipValidation: true, PrunePropagationPolicy: metav1.DeletePropagationBackground,
			},
		},
		"false values and Validate=true": {
			in:   []string{"ServerSideApply=false", "Validate=true", "PrunePropagationPolicy=orphan"},
			want: SyncOptions{PrunePropagationPolicy: metav1.DeletePropagationOrphan},
		},
		"unknown options are ignored like Argo CD does": {
			in:   []string{"ClientSideApplyMigration=false", "Delete=false", "CreateNamespace=true"},
			want: SyncOptions{CreateNamespace: true},
		},
		"bad boolean":            {in: []string{"PruneLast=yes"}, wantErr: true},
		"bad propagation policy": {in: []string{"PrunePropagationPolicy=sideways"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSyncOptions(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseSyncOptions() error = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("ParseSyncOptions() (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSettingsFor(t *testing.T) {
	obj := func(options string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAnnotations(map[string]string{v1alpha1.AnnotationSyncOptions: options})
		return o
	}
	tests := map[string]struct {
		app  SyncOptions
		obj  *unstructured.Unstructured
		want applySettings
	}{
		"client-side apply by default": {
			obj:  obj(""),
			want: applySettings{Mode: kube.ClientSideApply},
		},
		"app server-side apply": {
			app:  SyncOptions{ServerSideApply: true},
			obj:  obj(""),
			want: applySettings{Mode: kube.ServerSideApply},
		},
		"object turns server-side apply off": {
			app:  SyncOptions{ServerSideApply: true},
			obj:  obj("ServerSideApply=false"),
			want: applySettings{Mode: kube.ClientSideApply},
		},
		"object replace with force wins over server-side apply": {
			app:  SyncOptions{ServerSideApply: true},
			obj:  obj("Replace=true,Force=true"),
			want: applySettings{Mode: kube.Replace, Force: true},
		},
		"object Validate=false and SkipDryRunOnMissingResource": {
			obj:  obj("Validate=false, SkipDryRunOnMissingResource=true"),
			want: applySettings{Mode: kube.ClientSideApply, SkipValidation: true, SkipDryRunOnMissingResource: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, settingsFor(tc.app, tc.obj, nil)); diff != "" {
				t.Errorf("settingsFor() (-want +got):\n%s", diff)
			}
		})
	}
}
