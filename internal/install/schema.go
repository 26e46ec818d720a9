package install

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationCRD is the name of the Application CRD.
const ApplicationCRD = "applications.argoproj.io"

// KeepsSyncState reports whether the cluster's Application CRD keeps what
// wavecd writes besides Argo CD's fields: a running sync's state
// (status.operationState.wavecdState, which a restarted controller
// resumes from) and each resource's start and end times in the sync
// result. Argo CD's own CRD lacks both, and the API server drops fields a
// schema lacks, with a warning on every write.
func KeepsSyncState(ctx context.Context, c apiextensions.Interface) (bool, error) {
	crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, ApplicationCRD, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("read CRD %s: %w", ApplicationCRD, err)
	}
	return crdKeepsSyncState(crd), nil
}

// crdKeepsSyncState reads the CRD's stored version's schema.
func crdKeepsSyncState(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return true // no schema: nothing is pruned
		}
		op, ok := property(v.Schema.OpenAPIV3Schema, "status", "operationState")
		if !ok {
			return false
		}
		if _, ok := property(op, "wavecdState"); !ok {
			return false
		}
		res, ok := property(op, "syncResult", "resources")
		if !ok || res.Items == nil || res.Items.Schema == nil {
			return ok
		}
		_, ok = property(res.Items.Schema, "startedAt")
		return ok
	}
	return true
}

// property follows a path of properties through a schema; a schema that
// keeps unknown fields has each one.
func property(s *apiextensionsv1.JSONSchemaProps, path ...string) (*apiextensionsv1.JSONSchemaProps, bool) {
	for _, name := range path {
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
			return &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: s.XPreserveUnknownFields}, true
		}
		next, ok := s.Properties[name]
		if !ok {
			return nil, false
		}
		s = &next
	}
	return s, true
}
