package kube

import (
	"context"
	"encoding/json"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CreationCheck tells, without a request per object, that the API server
// would accept the creation of a custom resource: a dry run of each of a
// root's thousand child Applications costs as many requests as creating
// them. It answers only where the CRD's schema is all that decides: the
// kind's CRD has a structural schema without CEL rules, conversion webhook
// or scale subresource; no admission webhook or admission policy matches
// the resource; the namespace is active and has no ResourceQuota; and the
// caller may create the resource there. It then checks the object as the
// API server's handler for custom resources does: unknown fields (strict
// field validation), defaults, metadata, the schema and list types.
//
// Valid reports true only when the creation is known to succeed; anything
// else (an object it finds invalid, a fact it could not read) is left to
// the server's dry run, whose error the user then sees. The facts are read
// once per CreationCheck, so one serves one sync's dry run.
type CreationCheck struct {
	c *Cluster

	mu        sync.Mutex
	kinds     map[schema.GroupVersionResource]*crSchema
	admission *admissionRules
	scopes    map[string]bool
}

// crSchema is what validates one version of a custom resource; nil when
// the version cannot be checked without the server.
type crSchema struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	status     bool
}

// CreationCheck starts a check whose facts are read from the cluster as
// they are first needed.
func (c *Cluster) CreationCheck() *CreationCheck {
	return &CreationCheck{c: c, kinds: map[schema.GroupVersionResource]*crSchema{}, scopes: map[string]bool{}}
}

// Valid reports whether the API server would accept obj's creation with
// opts (a dry run of an object known to be missing: Known with no Live).
// Server-side apply is left to the server: its errors are structured
// merge's, not the handler's.
func (k *CreationCheck) Valid(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) bool {
	if !opts.DryRun || !opts.Known || opts.Live != nil || opts.Force || opts.SkipValidation {
		return false
	}
	if opts.Mode != ClientSideApply && opts.Mode != Create {
		return false
	}
	_, m, err := k.c.resource(RefOf(obj))
	if err != nil {
		return false
	}
	s := k.kind(ctx, m)
	if s == nil || !k.admissionFree(ctx, m.Resource) || !k.scopeFree(ctx, m.Resource, namespaceOf(obj, m)) {
		return false
	}
	body := prepare(obj, m)
	if opts.Mode == ClientSideApply {
		if body, err = withLastApplied(body); err != nil {
			return false
		}
	}
	return s.accepts(body)
}

func namespaceOf(obj *unstructured.Unstructured, m *apimeta.RESTMapping) string {
	if m.Scope.Name() != apimeta.RESTScopeNameNamespace {
		return ""
	}
	return obj.GetNamespace()
}

// maxCheckedBytes bounds the objects checked here: a larger one is near
// the limits of a request and of etcd, which only the server knows.
const maxCheckedBytes = 256 << 10

// accepts runs, on a copy of body, what the custom resource handler runs
// on a creation: decoding (unknown fields are an error under strict
// validation), pruning, defaulting, metadata coercion, then the
// strategy's validation. Any finding means false.
func (s *crSchema) accepts(body *unstructured.Unstructured) bool {
	data, err := json.Marshal(body.Object)
	if err != nil || len(data) > maxCheckedBytes || body.GroupVersionKind() != s.gvk {
		return false
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return false
	}
	if _, _, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true}); err != nil || len(unknown) > 0 {
		return false
	}
	if unknown := structuralpruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		return false
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)
	if ferr, unknown := schemaobjectmeta.CoerceWithOptions(nil, obj, s.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true}); ferr != nil || len(unknown) > 0 {
		return false
	}
	if s.status {
		delete(obj, "status") // a creation cannot set it
	}
	u := &unstructured.Unstructured{Object: obj}
	var errs field.ErrorList
	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(u, s.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, s.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	return len(errs) == 0
}

// kind returns the schema of m's resource and version, read from its CRD
// once (concurrent callers wait for the one read); nil for a built-in kind and for anything the schema alone does
// not decide.
func (k *CreationCheck) kind(ctx context.Context, m *apimeta.RESTMapping) *crSchema {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.kinds[m.Resource]
	if !ok {
		s = k.readKind(ctx, m)
		k.kinds[m.Resource] = s
	}
	return s
}

func (k *CreationCheck) readKind(ctx context.Context, m *apimeta.RESTMapping) *crSchema {
	if m.Resource.Group == "" {
		return nil
	}
	u, err := k.c.GetOptional(ctx, Ref{GVK: crdGVK, Name: m.Resource.Resource + "." + m.Resource.Group})
	if err != nil || u == nil || !crdEstablished(u) {
		return nil
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return nil
	}
	return schemaOf(&crd, m)
}

// schemaOf builds the validation of m's version from crd, nil when the
// server could do more than the schema says: CEL rules, a conversion
// webhook, a scale subresource, unknown fields preserved at the root, or
// the CRD not naming m's kind.
func schemaOf(crd *apiextensionsv1.CustomResourceDefinition, m *apimeta.RESTMapping) *crSchema {
	if crd.Spec.PreserveUnknownFields || crd.Spec.Group != m.GroupVersionKind.Group || crd.Spec.Names.Kind != m.GroupVersionKind.Kind {
		return nil
	}
	if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		return nil
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != m.GroupVersionKind.Version {
			continue
		}
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || (v.Subresources != nil && v.Subresources.Scale != nil) {
			return nil
		}
		internal := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil
		}
		if hasRules(internal) {
			return nil
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil
		}
		structural = structural.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(structural); err != nil {
			return nil
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil
		}
		return &crSchema{
			gvk:        m.GroupVersionKind,
			namespaced: m.Scope.Name() == apimeta.RESTScopeNameNamespace,
			structural: structural,
			validator:  validator,
			status:     v.Subresources != nil && v.Subresources.Status != nil,
		}
	}
	return nil
}

// hasRules reports whether a schema holds CEL validation rules anywhere
// (x-kubernetes-validations), which this check does not evaluate.
func hasRules(s *apiextensionsinternal.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	if s.Items != nil && (hasRules(s.Items.Schema) || hasAnyRules(s.Items.JSONSchemas)) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Schema) {
		return true
	}
	return hasAnyRules(s.AllOf) || hasAnyRules(s.AnyOf) || hasAnyRules(s.OneOf) || hasRules(s.Not)
}

func hasAnyRules(list []apiextensionsinternal.JSONSchemaProps) bool {
	for i := range list {
		if hasRules(&list[i]) {
			return true
		}
	}
	return false
}
