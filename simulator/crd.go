package simulator

import (
	"fmt"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crdSchemas are the structural schemas of a scenario's CRDs, one per
// served version, by group, version and kind: what the apiserver defaults
// objects of those kinds with.
type crdSchemas map[schema.GroupVersionKind]*structuralschema.Structural

// crdSchemaCache keeps the schemas of each CRD (by pointer) once built:
// every run of a scenario builds a store, and a CRD's schema (KubeRay's
// RayCluster: 13,000 lines of YAML) is the same each time. A Structural
// is only read once built, so runs in parallel share it.
var crdSchemaCache sync.Map // *apiextensionsv1.CustomResourceDefinition -> crdSchemas

// newCRDSchemas builds the structural schema of every served version of
// crds with the apiserver's own conversion (apiextensions-apiserver's
// schema package), so that defaulting follows the real algorithm.
func newCRDSchemas(crds []*apiextensionsv1.CustomResourceDefinition) (crdSchemas, error) {
	out := crdSchemas{}
	for _, crd := range crds {
		if crd == nil {
			return nil, fmt.Errorf("StoreOptions.CRDs holds a nil CRD; remove it")
		}
		built, ok := crdSchemaCache.Load(crd)
		if !ok {
			s, err := buildCRDSchemas(crd)
			if err != nil {
				return nil, err
			}
			built, _ = crdSchemaCache.LoadOrStore(crd, s)
		}
		for gvk, s := range built.(crdSchemas) {
			out[gvk] = s
		}
	}
	return out, nil
}

func buildCRDSchemas(crd *apiextensionsv1.CustomResourceDefinition) (crdSchemas, error) {
	out := crdSchemas{}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("CRD %s, version %s: converting its schema: %w", crd.Name, v.Name, err)
		}
		s, err := structuralschema.NewStructural(&internal)
		if err == nil {
			err = structuralschema.ValidateStructural(field.NewPath("spec", "versions").Key(v.Name).Child("schema", "openAPIV3Schema"), s).ToAggregate()
		}
		if err != nil {
			return nil, fmt.Errorf("CRD %s, version %s: its schema is not structural, which a real apiserver refuses too: %w", crd.Name, v.Name, err)
		}
		out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = s
	}
	return out, nil
}

// applyCRDDefaults sets the defaults of the kind's CRD schema (the
// `default:` of its OpenAPI schema, +kubebuilder:default in Go) on obj, as
// the apiserver does when it decodes a create or update: a field the
// request leaves out gets its default, also inside list items and map
// values the request has. A typed object goes through its unstructured
// form and back.
func (s *Store) applyCRDDefaults(k *kindInfo, obj client.Object) error {
	sch := s.crds[k.gvk]
	if sch == nil {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("defaulting %s %s/%s from its CRD schema: %w", k.gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	structuraldefaulting.Default(u, sch)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return fmt.Errorf("defaulting %s %s/%s from its CRD schema: a default does not fit the Go type (%w); fix the CRD or the type", k.gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
