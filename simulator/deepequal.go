package simulator

import (
	"reflect"
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// equalFunc reports whether the values at a and b, two *T of the type it
// was built for, are equal as reflect.DeepEqual(*a, *b) would say. depth
// counts the pointers, slices and maps followed so far.
//
// The store compares a request's spec and status with the stored ones on
// every write (the no-op check and the generation bump), and the standard
// library's DeepEqual walks them through reflect.Value, recording every
// pointer, slice and map it meets in a map of visited pairs: for a
// StatefulSet spec that was 7% of an exhaustive search. An equalFunc is
// built once per type, a tree of closures over field offsets that reads
// the values in place and allocates nothing.
type equalFunc func(a, b unsafe.Pointer, depth int) bool

// maxEqualDepth is how deep an equalFunc follows pointers, slices and maps
// before it hands the rest to reflect.DeepEqual, whose visited-pair table
// ends cycles: API objects are trees, but a user's type may hold a cycle.
const maxEqualDepth = 100

var (
	// equalFuncsMu guards equalFuncs, the entries built or being built;
	// equalFuncsReady holds the finished ones for lock-free reads.
	equalFuncsMu    sync.Mutex
	equalFuncs      = map[reflect.Type]*equalEntry{}
	equalFuncsReady sync.Map // reflect.Type -> equalFunc
)

// equalEntry holds one type's equalFunc. A recursive type's closures
// reach their own type through the entry, which is filled in once built.
type equalEntry struct{ f equalFunc }

// deepEqualOf returns the equalFunc of type t, built on first use and
// shared by every world (it is read only).
func deepEqualOf(t reflect.Type) equalFunc {
	if f, ok := equalFuncsReady.Load(t); ok {
		return f.(equalFunc)
	}
	equalFuncsMu.Lock()
	defer equalFuncsMu.Unlock()
	f := equalEntryOf(t).f
	equalFuncsReady.Store(t, f)
	return f
}

// deepEqual reports whether *a equals *b as reflect.DeepEqual(a, b) says,
// with T's equalFunc.
func deepEqual[T any](a, b *T) bool {
	return equalAt(deepEqualOf(reflect.TypeFor[T]()), unsafe.Pointer(a), unsafe.Pointer(b))
}

// equalAt compares the values at a and b with their type's equalFunc, as
// reflect.DeepEqual compares two pointers: a value is equal to itself (even
// a NaN).
func equalAt(f equalFunc, a, b unsafe.Pointer) bool { return a == b || f(a, b, 0) }

// equalEntryOf is deepEqualOf under equalFuncsMu. The entry of a type still
// being built is returned at once (a recursive type), with a closure that
// reads its function when called.
func equalEntryOf(t reflect.Type) *equalEntry {
	if e, ok := equalFuncs[t]; ok {
		return e
	}
	e := &equalEntry{}
	equalFuncs[t] = e
	e.f = buildEqual(t)
	return e
}

// fallbackEqual compares with reflect.DeepEqual: for the kinds an
// equalFunc does not walk itself (interfaces, maps other than
// map[string]string, funcs, channels) and past maxEqualDepth. Pointers to
// the two values compare as the values do.
func fallbackEqual(t reflect.Type) equalFunc {
	return func(a, b unsafe.Pointer, _ int) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Interface(), reflect.NewAt(t, b).Interface())
	}
}

var stringMapType = reflect.TypeFor[map[string]string]()

func buildEqual(t reflect.Type) equalFunc {
	switch t.Kind() {
	case reflect.Bool:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*bool)(a) == *(*bool)(b) }
	case reflect.Int8, reflect.Uint8:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*uint8)(a) == *(*uint8)(b) }
	case reflect.Int16, reflect.Uint16:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*uint16)(a) == *(*uint16)(b) }
	case reflect.Int32, reflect.Uint32:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*uint32)(a) == *(*uint32)(b) }
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 4 {
			return func(a, b unsafe.Pointer, _ int) bool { return *(*uint32)(a) == *(*uint32)(b) }
		}
		return func(a, b unsafe.Pointer, _ int) bool { return *(*uint64)(a) == *(*uint64)(b) }
	case reflect.Float32:
		// As floats: NaN differs from itself, -0 equals 0 (DeepEqual's ==).
		return func(a, b unsafe.Pointer, _ int) bool { return *(*float32)(a) == *(*float32)(b) }
	case reflect.Float64:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*float64)(a) == *(*float64)(b) }
	case reflect.Complex64:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*complex64)(a) == *(*complex64)(b) }
	case reflect.Complex128:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*complex128)(a) == *(*complex128)(b) }
	case reflect.String:
		return func(a, b unsafe.Pointer, _ int) bool { return *(*string)(a) == *(*string)(b) }
	case reflect.Pointer:
		return pointerEqual(t)
	case reflect.Struct:
		return structEqual(t)
	case reflect.Array:
		return arrayEqual(t)
	case reflect.Slice:
		return sliceEqual(t)
	case reflect.Map:
		if t == stringMapType {
			return stringMapEqual
		}
		if build, ok := typedMapEquals[t]; ok {
			return build(equalEntryOf(t.Elem()), fallbackEqual(t))
		}
	}
	return fallbackEqual(t)
}

// typedMapEquals build the equalFuncs of the map types API objects hold
// besides map[string]string: a pod's resource lists (in every container)
// and a secret's or config map's binary data. reflect.DeepEqual on a map
// allocates its visited table and a copy of every value it reads.
var typedMapEquals = map[reflect.Type]func(elem *equalEntry, fallback equalFunc) equalFunc{
	reflect.TypeFor[corev1.ResourceList](): mapEqual[corev1.ResourceName, resource.Quantity],
	reflect.TypeFor[map[string][]byte]():   mapEqual[string, []byte],
}

// mapEqual compares two map[K]V as DeepEqual does: a nil map differs from
// an empty one, and the values of each key compare with V's equalFunc.
func mapEqual[K comparable, V any](elem *equalEntry, fallback equalFunc) equalFunc {
	return func(a, b unsafe.Pointer, depth int) bool {
		ma, mb := *(*map[K]V)(a), *(*map[K]V)(b)
		if (ma == nil) != (mb == nil) || len(ma) != len(mb) {
			return false
		}
		if *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b) {
			return true // one map (DeepEqual's shortcut)
		}
		if depth >= maxEqualDepth {
			return fallback(a, b, depth)
		}
		if len(ma) == 0 {
			return true
		}
		// Two slots the values are copied into for the equalFunc, which
		// reads through pointers: two allocations per map, not per value.
		va, vb := new(V), new(V)
		for k, v := range ma {
			w, ok := mb[k]
			if !ok {
				return false
			}
			*va, *vb = v, w
			if !elem.f(unsafe.Pointer(va), unsafe.Pointer(vb), depth+1) {
				return false
			}
		}
		return true
	}
}

func pointerEqual(t reflect.Type) equalFunc {
	elem := equalEntryOf(t.Elem())
	fallback := fallbackEqual(t.Elem())
	return func(a, b unsafe.Pointer, depth int) bool {
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == pb {
			return true
		}
		if pa == nil || pb == nil {
			return false
		}
		if depth >= maxEqualDepth {
			return fallback(pa, pb, depth)
		}
		return elem.f(pa, pb, depth+1)
	}
}

func structEqual(t reflect.Type) equalFunc {
	type part struct {
		offset uintptr
		eq     *equalEntry
	}
	var parts []part
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Size() == 0 {
			continue // nothing to compare (DeepEqual finds two empty values equal)
		}
		parts = append(parts, part{f.Offset, equalEntryOf(f.Type)})
	}
	return func(a, b unsafe.Pointer, depth int) bool {
		for _, p := range parts {
			if !p.eq.f(unsafe.Add(a, p.offset), unsafe.Add(b, p.offset), depth) {
				return false
			}
		}
		return true
	}
}

func arrayEqual(t reflect.Type) equalFunc {
	elem := equalEntryOf(t.Elem())
	n, size := t.Len(), t.Elem().Size()
	return func(a, b unsafe.Pointer, depth int) bool {
		for i := 0; i < n; i++ {
			off := uintptr(i) * size
			if !elem.f(unsafe.Add(a, off), unsafe.Add(b, off), depth) {
				return false
			}
		}
		return true
	}
}

// sliceHeader is the runtime's layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func sliceEqual(t reflect.Type) equalFunc {
	elem := equalEntryOf(t.Elem())
	size := t.Elem().Size()
	fallback := fallbackEqual(t)
	return func(a, b unsafe.Pointer, depth int) bool {
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		// As DeepEqual: a nil slice differs from an empty one.
		if (sa.data == nil) != (sb.data == nil) || sa.len != sb.len {
			return false
		}
		if sa.data == sb.data {
			return true
		}
		if depth >= maxEqualDepth {
			return fallback(a, b, depth)
		}
		for i := 0; i < sa.len; i++ {
			off := uintptr(i) * size
			if !elem.f(unsafe.Add(sa.data, off), unsafe.Add(sb.data, off), depth+1) {
				return false
			}
		}
		return true
	}
}

// stringMapEqual compares two map[string]string (labels, annotations,
// node selectors) as DeepEqual does: a nil map differs from an empty one.
func stringMapEqual(a, b unsafe.Pointer, _ int) bool {
	ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
	if (ma == nil) != (mb == nil) || len(ma) != len(mb) {
		return false
	}
	for k, va := range ma {
		if vb, ok := mb[k]; !ok || va != vb {
			return false
		}
	}
	return true
}
