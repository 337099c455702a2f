package simulator

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestMemoRESTMapperAnswersAsTheDefault: for every kind of the scheme (and
// a kind it does not know), with no version, each registered version, an
// empty one, an unknown one and two at once, the memoized RESTMapping
// answers as the DefaultRESTMapper it wraps, cluster-scoped kinds
// included; and an answer is the caller's own copy.
func TestMemoRESTMapperAnswersAsTheDefault(t *testing.T) {
	s := testScheme()
	s.AddKnownTypes(schema.GroupVersion{Group: "test.opcheck.io", Version: "v1"}, &handCopied{}, &handCopiedList{})
	scopedGK := schema.GroupKind{Group: "test.opcheck.io", Kind: "handCopied"}
	cl := NewCluster(s, ClusterOptions{StoreOptions: StoreOptions{ClusterScoped: []schema.GroupKind{scopedGK}}})
	memo, ok := cl.Store.kinds.restMapper().(*memoRESTMapper)
	if !ok {
		t.Fatalf("the cluster's RESTMapper is a %T, want the memoized one", cl.Store.kinds.restMapper())
	}
	slow := memo.DefaultRESTMapper
	questions := [][]string{nil, {""}, {"v9"}, {"v1", "v9"}}
	kinds := map[schema.GroupKind][]string{{Group: "nowhere.io", Kind: "Nothing"}: nil}
	for gvk := range s.AllKnownTypes() {
		kinds[gvk.GroupKind()] = append(kinds[gvk.GroupKind()], gvk.Version)
	}
	answered, scoped := 0, false
	for gk, versions := range kinds {
		qs := append([][]string{}, questions...)
		for _, v := range versions {
			qs = append(qs, []string{v})
		}
		for _, q := range qs {
			got, gotErr := memo.RESTMapping(gk, q...)
			want, wantErr := slow.RESTMapping(gk, q...)
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("RESTMapping(%v, %q): error %v, the DefaultRESTMapper's %v", gk, q, gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("RESTMapping(%v, %q) = %+v, the DefaultRESTMapper's %+v", gk, q, got, want)
			}
			if gotErr == nil {
				answered++
				scoped = scoped || (gk == scopedGK && got.Scope.Name() == meta.RESTScopeNameRoot)
				got.Resource.Resource = "scribbled"
				if again, _ := memo.RESTMapping(gk, q...); again.Resource.Resource == "scribbled" {
					t.Fatalf("RESTMapping(%v, %q) hands out the memo's own mapping: a caller's change reached the next answer", gk, q)
				}
			}
		}
	}
	if answered < 100 || !scoped {
		t.Fatalf("%d mappings compared (cluster-scoped kind seen: %v): the scheme's kinds were not all asked", answered, scoped)
	}
}
