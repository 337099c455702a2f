package targets

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/randfill"
)

// TestDeepCopyOfEveryTargetType checks the hand-written DeepCopy functions of
// every custom resource type the shipped scenarios register (the case
// studies' api.go files), the way apimachinery's round-trip tests check
// generated ones: fill an object with seeded random values, copy it, and
// require (1) the copy equals the original and (2) overwriting every field of
// the copy with other random values leaves the original unchanged, which
// fails on any slice, map or pointer the copy shares with its source.
//
// Built-in k8s.io types are skipped: their DeepCopy is generated upstream.
func TestDeepCopyOfEveryTargetType(t *testing.T) {
	types := map[schema.GroupVersionKind]reflect.Type{}
	for _, sc := range All() {
		for gvk, typ := range sc.Scheme.AllKnownTypes() {
			if strings.HasSuffix(gvk.Group, "k8s.io") || gvk.Group == "" || isBuiltinPackage(typ) {
				continue
			}
			types[gvk] = typ
		}
	}
	if len(types) == 0 {
		t.Fatal("no custom resource types found in the shipped scenarios' schemes: the test would check nothing")
	}
	gvks := make([]schema.GroupVersionKind, 0, len(types))
	for gvk := range types {
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })

	for _, gvk := range gvks {
		typ := types[gvk]
		t.Run(gvk.Kind+"."+gvk.Group, func(t *testing.T) {
			for seed := int64(1); seed <= 50; seed++ {
				orig := filled(typ, seed)
				cp := orig.DeepCopyObject()
				if !reflect.DeepEqual(orig, cp) {
					t.Fatalf("seed %d: DeepCopyObject differs from its source:\nsource %+v\ncopy   %+v", seed, orig, cp)
				}
				// Change the copy in place: every string, number and bool
				// it reaches, through its pointers, slice elements and map
				// entries (a fresh fill would allocate new slices and maps
				// and so could never reveal a shared one).
				mutateInPlace(reflect.ValueOf(cp))
				// The same seed fills an identical fresh object: the
				// reference the source must still equal.
				if want := filled(typ, seed); !reflect.DeepEqual(want, orig) {
					t.Fatalf("seed %d: writing to the copy changed the source, so the copy aliases it:\nwant %+v\ngot  %+v", seed, want, orig)
				}
			}
		})
	}
}

// isBuiltinPackage reports whether typ comes from a k8s.io or sigs.k8s.io
// module (metav1.Status and friends are registered into every group).
func isBuiltinPackage(typ reflect.Type) bool {
	p := typ.PkgPath()
	return strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/")
}

// mutateInPlace changes every settable scalar reachable from v without
// allocating new containers, so that memory shared with another object shows
// up as a change there.
func mutateInPlace(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			mutateInPlace(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				mutateInPlace(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			mutateInPlace(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutateInPlace(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "~")
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.CanSet() {
			v.SetUint(v.Uint() + 1)
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			v.SetFloat(v.Float() + 1)
		}
	}
}

// filled returns a new object of typ filled from seed; the same seed gives
// an equal object every time.
func filled(typ reflect.Type, seed int64) runtime.Object {
	obj := reflect.New(typ).Interface().(runtime.Object)
	randfill.NewWithSeed(seed).NilChance(0.2).NumElements(1, 3).Fill(obj)
	return obj
}
