package simulator_test

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/simulator"
)

// Cache is a custom resource whose CRD defaults fields: spec.size 3,
// spec.mode "lru", and spec.shards[].weight 1.
type Cache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CacheSpec `json:"spec,omitempty"`
}

type CacheSpec struct {
	Size   *int32       `json:"size,omitempty"`
	Mode   string       `json:"mode,omitempty"`
	Shards []CacheShard `json:"shards,omitempty"`
}

type CacheShard struct {
	Name   string `json:"name"`
	Weight *int32 `json:"weight,omitempty"`
}

func (in *Cache) DeepCopyObject() runtime.Object {
	out := &Cache{TypeMeta: in.TypeMeta}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Size != nil {
		v := *in.Spec.Size
		out.Spec.Size = &v
	}
	out.Spec.Mode = in.Spec.Mode
	for _, s := range in.Spec.Shards {
		c := CacheShard{Name: s.Name}
		if s.Weight != nil {
			w := *s.Weight
			c.Weight = &w
		}
		out.Spec.Shards = append(out.Spec.Shards, c)
	}
	return out
}

type CacheList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cache `json:"items"`
}

func (in *CacheList) DeepCopyObject() runtime.Object {
	out := &CacheList{TypeMeta: in.TypeMeta, Items: copyItems(in.Items)}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

var cacheGV = schema.GroupVersion{Group: "cache.opcheck.test", Version: "v1"}

func cacheScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(cacheGV, &Cache{}, &CacheList{})
	metav1.AddToGroupVersion(s, cacheGV)
	return s
}

func jsonDefault(v string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(v)} }

// cacheCRD is the Cache CRD, as controller-gen would write it for
// +kubebuilder:default markers on the fields.
func cacheCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	i32 := func(def string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32", Default: jsonDefault(def)}
	}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"size": i32("3"),
		"mode": {Type: "string", Default: jsonDefault(`"lru"`)},
		"shards": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Required: []string{"name"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": str, "weight": i32("1")},
		}}},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "caches.cache.opcheck.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: cacheGV.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "caches", Singular: "cache", Kind: "Cache", ListKind: "CacheList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": str, "kind": str, "metadata": {Type: "object"}, "spec": spec,
					},
				}},
			}},
		},
	}
}

// The apiserver defaults a custom resource from its CRD's schema on create
// and update, with the real structural defaulting: a field the request
// leaves out gets its default (inside list items too), a field it sets
// keeps its value. Without the CRD, the object is stored as sent.
func TestCRDSchemaDefaults(t *testing.T) {
	ctx := context.Background()
	cl := simulator.NewCluster(cacheScheme(), simulator.ClusterOptions{StoreOptions: simulator.StoreOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{cacheCRD()}}}).Client("user", 1, true)

	bare := &Cache{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bare"}}
	if err := cl.Create(ctx, bare); err != nil {
		t.Fatal(err)
	}
	var got Cache
	if err := cl.Get(ctx, client.ObjectKeyFromObject(bare), &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Size == nil || *got.Spec.Size != 3 || got.Spec.Mode != "lru" {
		t.Fatalf("created with an empty spec, stored %+v; want size 3 and mode lru from the CRD", got.Spec)
	}
	if bare.Spec.Size == nil || *bare.Spec.Size != 3 {
		t.Errorf("the caller's object after Create has spec %+v; the response carries the defaults", bare.Spec)
	}

	five := int32(5)
	set := &Cache{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "set"}, Spec: CacheSpec{Size: &five, Shards: []CacheShard{{Name: "a"}}}}
	if err := cl.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	if *set.Spec.Size != 5 || set.Spec.Shards[0].Weight == nil || *set.Spec.Shards[0].Weight != 1 {
		t.Fatalf("stored spec %+v (shard %+v); want size 5 kept and the shard's weight defaulted to 1", set.Spec, set.Spec.Shards[0])
	}

	// An update that drops a defaulted field gets the default again.
	set.Spec.Mode = ""
	if err := cl.Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	if set.Spec.Mode != "lru" {
		t.Fatalf("after an update without mode, mode is %q; want lru", set.Spec.Mode)
	}

	plain := simulator.NewCluster(cacheScheme(), simulator.ClusterOptions{}).Client("user", 1, true)
	asSent := &Cache{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bare"}}
	if err := plain.Create(ctx, asSent); err != nil {
		t.Fatal(err)
	}
	if asSent.Spec.Size != nil || asSent.Spec.Mode != "" {
		t.Fatalf("without the CRD the object should be stored as sent, got %+v", asSent.Spec)
	}
}

// A CRD whose schema is not structural is refused when the world is built,
// with the apiserver's reason, as a real apiserver refuses to serve it.
func TestCRDSchemaNotStructural(t *testing.T) {
	crd := cacheCRD()
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Type = "" // a structural schema gives every node a type
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	sc := &simulator.Scenario{
		Name: "cache/not-structural", Scheme: cacheScheme(),
		StoreOptions: simulator.StoreOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}},
		Controllers: []simulator.ControllerSpec{{Name: "nop", For: &Cache{}, New: func(client.Client) reconcile.Reconciler {
			return reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
		}}},
	}
	_, err := simulator.NewWorld(sc, nil, simulator.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "not structural") || !strings.Contains(err.Error(), "caches.cache.opcheck.test") {
		t.Fatalf("NewWorld: %v; want the CRD named and refused as not structural", err)
	}
}
