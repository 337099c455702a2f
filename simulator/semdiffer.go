package simulator

import (
	"reflect"
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// differFunc reports whether the values at a and b, two *T of the type it
// was built for, are surely unequal for equality.Semantic.DeepEqual; false
// means "not decided here". The store compares with reflect.DeepEqual's
// answer first (an equalFunc) and asks the semantic comparison only when
// that finds a difference: a write that changes a spec or a status always
// did, walking the values a second time through reflection. A difference
// at a plain field (a string, a number, a length) is one the semantic
// comparison sees too, so a differFunc that finds one settles it. It
// leaves undecided what the semantic comparison may judge otherwise: nil
// against empty, and values inside interfaces and maps of other types.
type differFunc func(a, b unsafe.Pointer, depth int) bool

var (
	differFuncsMu    sync.Mutex
	differFuncs      = map[reflect.Type]*differEntry{}
	differFuncsReady sync.Map // reflect.Type -> differFunc (nil: none)
)

type differEntry struct{ f differFunc }

// semanticFuncs are the types equality.Semantic compares with functions of
// its own (k8s.io/apimachinery/pkg/api/equality): a differFunc calls the
// same comparison for them.
var semanticFuncs = map[reflect.Type]differFunc{
	reflect.TypeFor[resource.Quantity](): func(a, b unsafe.Pointer, _ int) bool {
		// On a copy, as the semantic comparison's own function: Cmp may
		// convert its receiver's representation, and a is a stored
		// object's (or the caller's).
		qa := *(*resource.Quantity)(a)
		return qa.Cmp(*(*resource.Quantity)(b)) != 0
	},
	reflect.TypeFor[metav1.Time](): func(a, b unsafe.Pointer, _ int) bool {
		return (*metav1.Time)(a).UTC() != (*metav1.Time)(b).UTC()
	},
	reflect.TypeFor[metav1.MicroTime](): func(a, b unsafe.Pointer, _ int) bool {
		return (*metav1.MicroTime)(a).UTC() != (*metav1.MicroTime)(b).UTC()
	},
	reflect.TypeFor[metav1.FieldsV1](): func(a, b unsafe.Pointer, _ int) bool {
		return !(*metav1.FieldsV1)(a).Equal(*(*metav1.FieldsV1)(b))
	},
}

// semanticDifferOf returns the differFunc of type t, or nil when the
// semantic comparison of t may panic (an unexported field outside the
// types it has functions for, an interface, a channel): then only its own
// answer, panic included, is the old behaviour, and callers ask it.
func semanticDifferOf(t reflect.Type) differFunc {
	if f, ok := differFuncsReady.Load(t); ok {
		return f.(differFunc)
	}
	differFuncsMu.Lock()
	defer differFuncsMu.Unlock()
	var f differFunc
	if semanticPanicFree(t, map[reflect.Type]bool{}) {
		f = differEntryOf(t).f
	}
	differFuncsReady.Store(t, f)
	return f
}

// semanticPanicFree reports whether equality.Semantic.DeepEqual compares
// every value of t without panicking: it panics on reading an unexported
// field of a type it has no function for.
func semanticPanicFree(t reflect.Type, seen map[reflect.Type]bool) bool {
	if _, ok := semanticFuncs[t]; ok || seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); !f.IsExported() || !semanticPanicFree(f.Type, seen) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return semanticPanicFree(t.Elem(), seen)
	case reflect.Interface, reflect.Chan, reflect.UnsafePointer:
		return false
	}
	return true
}

func differEntryOf(t reflect.Type) *differEntry {
	if e, ok := differFuncs[t]; ok {
		return e
	}
	e := &differEntry{}
	differFuncs[t] = e
	e.f = buildDiffer(t)
	return e
}

func undecided(a, b unsafe.Pointer, _ int) bool { return false }

func buildDiffer(t reflect.Type) differFunc {
	if f, ok := semanticFuncs[t]; ok {
		return f
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		// Compared with == by both: what the equalFunc finds unequal is.
		eq := deepEqualOf(t)
		return func(a, b unsafe.Pointer, depth int) bool { return !eq(a, b, depth) }
	case reflect.Pointer:
		elem := differEntryOf(t.Elem())
		return func(a, b unsafe.Pointer, depth int) bool {
			pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
			if pa == pb {
				return false
			}
			if pa == nil || pb == nil {
				return true // a nil pointer and a non-nil one
			}
			return depth < maxEqualDepth && elem.f(pa, pb, depth+1)
		}
	case reflect.Struct:
		type part struct {
			offset uintptr
			d      *differEntry
		}
		var parts []part
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.Type.Size() > 0 {
				parts = append(parts, part{f.Offset, differEntryOf(f.Type)})
			}
		}
		return func(a, b unsafe.Pointer, depth int) bool {
			for _, p := range parts {
				if p.d.f(unsafe.Add(a, p.offset), unsafe.Add(b, p.offset), depth) {
					return true
				}
			}
			return false
		}
	case reflect.Array:
		elem := differEntryOf(t.Elem())
		n, size := t.Len(), t.Elem().Size()
		return func(a, b unsafe.Pointer, depth int) bool {
			for i := 0; i < n; i++ {
				off := uintptr(i) * size
				if elem.f(unsafe.Add(a, off), unsafe.Add(b, off), depth) {
					return true
				}
			}
			return false
		}
	case reflect.Slice:
		elem := differEntryOf(t.Elem())
		size := t.Elem().Size()
		return func(a, b unsafe.Pointer, depth int) bool {
			sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
			// Nil and empty are equal to the semantic comparison; empty
			// and non-empty, or two lengths, are not.
			if sa.len != sb.len {
				return true
			}
			if sa.len == 0 || sa.data == sb.data || depth >= maxEqualDepth {
				return false
			}
			for i := 0; i < sa.len; i++ {
				off := uintptr(i) * size
				if elem.f(unsafe.Add(sa.data, off), unsafe.Add(sb.data, off), depth+1) {
					return true
				}
			}
			return false
		}
	case reflect.Map:
		switch t {
		case stringMapType:
			return mapDiffer[string, string](differEntryOf(t.Elem()))
		case reflect.TypeFor[corev1.ResourceList]():
			return mapDiffer[corev1.ResourceName, resource.Quantity](differEntryOf(t.Elem()))
		case reflect.TypeFor[map[string][]byte]():
			return mapDiffer[string, []byte](differEntryOf(t.Elem()))
		}
	}
	return undecided
}

// mapDiffer finds a semantic difference between two map[K]V: other sizes
// (nil and empty are equal), a key of one missing from the other, or a
// value that differs.
func mapDiffer[K comparable, V any](elem *differEntry) differFunc {
	return func(a, b unsafe.Pointer, depth int) bool {
		ma, mb := *(*map[K]V)(a), *(*map[K]V)(b)
		if len(ma) != len(mb) {
			return true
		}
		if len(ma) == 0 || depth >= maxEqualDepth {
			return false
		}
		va, vb := new(V), new(V)
		for k, v := range ma {
			w, ok := mb[k]
			if !ok {
				return true
			}
			*va, *vb = v, w
			if elem.f(unsafe.Pointer(va), unsafe.Pointer(vb), depth+1) {
				return true
			}
		}
		return false
	}
}
