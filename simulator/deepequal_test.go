package simulator

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"
)

// everyKind has a field of every kind an equalFunc handles itself or hands
// to reflect.DeepEqual, unexported ones included (DeepEqual compares
// those too).
type everyKind struct {
	B     bool
	I8    int8
	I16   int16
	I32   int32
	I     int
	U8    uint8
	U16   uint16
	U64   uint64
	Up    uintptr
	F32   float32
	F64   float64
	C64   complex64
	C128  complex128
	S     string
	P     *string
	Arr   [2]string
	Sl    []string
	Bytes []byte
	M     map[string]string
	MI    map[string]int
	Iface any
	Fn    func()
	Ch    chan int
	Empty struct{}
	Next  *everyKind
	Kids  []everyKind
	small int16
	named corev1.ResourceName
	Res   corev1.ResourceList
	Bin   map[string][]byte
}

// TestEqualFuncIsReflectDeepEqual: for random objects of the kinds the
// store compares, and for random single changes to a copy of each, the
// equalFunc answers exactly what reflect.DeepEqual answers (the store's
// no-op and generation checks rely on it: what it calls equal must be
// equal, and a change it misses would be a write the store drops).
func TestEqualFuncIsReflectDeepEqual(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	filler := randfill.New().RandSource(rng).NilChance(0.3).NumElements(0, 3).MaxDepth(6).
		Funcs(func(f *func(), c randfill.Continue) {}, func(ch *chan int, c randfill.Continue) {}, func(v *any, c randfill.Continue) {
			switch c.Intn(3) {
			case 0:
				*v = c.String(2)
			case 1:
				*v = []int{c.Intn(2)}
			}
		})
	check := func(t *testing.T, name string, fresh func() any, deepCopy func(any) any) {
		differed, settled, rounds := 0, 0, 300
		differ := semanticDifferOf(reflect.TypeOf(fresh()).Elem())
		for round := 0; round < rounds; round++ {
			a := fresh()
			filler.Fill(a)
			b := deepCopy(a)
			if !sameAsDeepEqual(t, a, b) {
				t.Fatalf("%s round %d: the equalFunc and reflect.DeepEqual differ on an object and its copy", name, round)
			}
			leaves := settableLeaves(reflect.ValueOf(b).Elem(), nil)
			if len(leaves) == 0 {
				continue
			}
			leaf := leaves[rng.Intn(len(leaves))]
			if !mutate(leaf, rng) {
				continue
			}
			if !sameAsDeepEqual(t, a, b) {
				t.Fatalf("%s round %d: the equalFunc and reflect.DeepEqual differ after a change to a %s", name, round, leaf.Type())
			}
			if !reflect.DeepEqual(a, b) {
				differed++
			}
			if differ != nil && differ(reflect.ValueOf(a).UnsafePointer(), reflect.ValueOf(b).UnsafePointer(), 0) {
				// The differFunc settled it: the semantic comparison must
				// find the same difference.
				if equality.Semantic.DeepEqual(a, b) {
					t.Fatalf("%s round %d: the differFunc finds a difference after a change to a %s that the semantic comparison does not", name, round, leaf.Type())
				}
				settled++
			}
		}
		if differ != nil && settled < differed/2 {
			t.Fatalf("%s: the differFunc settled only %d of %d differences", name, settled, differed)
		}
		// The changes must have made a difference often enough for the
		// comparison above to have tested the unequal answer.
		if differed < rounds/3 {
			t.Fatalf("%s: only %d of %d changes made the objects differ", name, differed, rounds)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[appsv1.StatefulSet](), reflect.TypeFor[corev1.Pod](), reflect.TypeFor[corev1.PersistentVolumeClaim](), reflect.TypeFor[corev1.ConfigMap]()} {
		if semanticDifferOf(typ) == nil {
			t.Errorf("%s has no differFunc: the semantic comparison of its fields cannot panic", typ)
		}
	}
	if semanticDifferOf(reflect.TypeFor[everyKind]()) != nil {
		t.Error("everyKind has a differFunc, but its semantic comparison may panic (unexported fields, an interface)")
	}
	t.Run("StatefulSet", func(t *testing.T) {
		check(t, "StatefulSet", func() any { return &appsv1.StatefulSet{} }, func(o any) any { return o.(*appsv1.StatefulSet).DeepCopy() })
	})
	t.Run("Pod", func(t *testing.T) {
		check(t, "Pod", func() any { return &corev1.Pod{} }, func(o any) any { return o.(*corev1.Pod).DeepCopy() })
	})
	t.Run("PersistentVolumeClaim", func(t *testing.T) {
		check(t, "PersistentVolumeClaim", func() any { return &corev1.PersistentVolumeClaim{} }, func(o any) any { return o.(*corev1.PersistentVolumeClaim).DeepCopy() })
	})
	t.Run("ConfigMap", func(t *testing.T) {
		check(t, "ConfigMap", func() any { return &corev1.ConfigMap{} }, func(o any) any { return o.(*corev1.ConfigMap).DeepCopy() })
	})
	t.Run("everyKind", func(t *testing.T) {
		check(t, "everyKind", func() any { return &everyKind{} }, func(o any) any { return copyEveryKind(o.(*everyKind)) })
	})
}

// TestEqualFuncEdges: the answers that differ from a naive comparison.
func TestEqualFuncEdges(t *testing.T) {
	nan := math.NaN()
	str := "x"
	cases := []struct {
		name string
		a, b everyKind
	}{
		{"nil and empty slice", everyKind{Sl: nil}, everyKind{Sl: []string{}}},
		{"nil and empty map", everyKind{M: nil}, everyKind{M: map[string]string{}}},
		{"nil and empty map[string]int", everyKind{MI: nil}, everyKind{MI: map[string]int{}}},
		{"NaN", everyKind{F64: nan}, everyKind{F64: nan}},
		{"zero and negative zero", everyKind{F64: 0}, everyKind{F64: math.Copysign(0, -1)}},
		{"nil and non-nil func", everyKind{}, everyKind{Fn: func() {}}},
		{"nil and set pointer", everyKind{}, everyKind{P: &str}},
		{"interface holding int and int64", everyKind{Iface: 1}, everyKind{Iface: int64(1)}},
		{"unexported field", everyKind{small: 1}, everyKind{small: 2}},
		{"map value", everyKind{M: map[string]string{"k": "a"}}, everyKind{M: map[string]string{"k": "b"}}},
		{"map key", everyKind{M: map[string]string{"k": ""}}, everyKind{M: map[string]string{"j": ""}}},
		{"equal maps", everyKind{M: map[string]string{"k": "a", "j": "b"}}, everyKind{M: map[string]string{"j": "b", "k": "a"}}},
		{"nil and empty resource list", everyKind{Res: nil}, everyKind{Res: corev1.ResourceList{}}},
		{"quantities written differently", everyKind{Res: corev1.ResourceList{"cpu": resource.MustParse("1")}}, everyKind{Res: corev1.ResourceList{"cpu": resource.MustParse("1000m")}}},
		{"equal resource lists", everyKind{Res: corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}}, everyKind{Res: corev1.ResourceList{"memory": resource.MustParse("1Gi"), "cpu": resource.MustParse("1")}}},
		{"resource list keys", everyKind{Res: corev1.ResourceList{"cpu": resource.MustParse("1")}}, everyKind{Res: corev1.ResourceList{"memory": resource.MustParse("1")}}},
		{"binary data", everyKind{Bin: map[string][]byte{"k": {1}}}, everyKind{Bin: map[string][]byte{"k": {2}}}},
		{"nil and empty binary value", everyKind{Bin: map[string][]byte{"k": nil}}, everyKind{Bin: map[string][]byte{"k": {}}}},
		{"nested kids", everyKind{Kids: []everyKind{{S: "a", Next: &everyKind{I: 1}}}}, everyKind{Kids: []everyKind{{S: "a", Next: &everyKind{I: 2}}}}},
	}
	for _, c := range cases {
		if !sameAsDeepEqual(t, &c.a, &c.b) {
			t.Errorf("%s: the equalFunc says %v, reflect.DeepEqual %v", c.name, !reflect.DeepEqual(&c.a, &c.b), reflect.DeepEqual(&c.a, &c.b))
		}
		if !sameAsDeepEqual(t, &c.a, &c.a) {
			t.Errorf("%s: the equalFunc and reflect.DeepEqual differ on a value and itself", c.name)
		}
	}
	// A cycle: past maxEqualDepth the comparison is reflect.DeepEqual's,
	// which ends cycles; a chain longer than that is compared in full.
	ca, cb := &everyKind{I: 1}, &everyKind{I: 1}
	ca.Next, cb.Next = ca, cb
	if !deepEqual(ca, cb) {
		t.Error("two equal one-object cycles compare unequal")
	}
	long := func(last int) *everyKind {
		head := &everyKind{}
		for n, i := head, 0; i < 3*maxEqualDepth; i++ {
			n.Next = &everyKind{I: i}
			n = n.Next
			if i == 3*maxEqualDepth-1 {
				n.I = last
			}
		}
		return head
	}
	if deepEqual(long(1), long(2)) || !deepEqual(long(1), long(1)) {
		t.Error("chains longer than maxEqualDepth that differ only at their end compare wrongly")
	}
}

// sameAsDeepEqual reports whether the equalFunc of a's type agrees with
// reflect.DeepEqual on *a and *b.
func sameAsDeepEqual(t *testing.T, a, b any) bool {
	t.Helper()
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	got := equalAt(deepEqualOf(va.Type().Elem()), va.UnsafePointer(), vb.UnsafePointer())
	return got == reflect.DeepEqual(a, b)
}

// settableLeaves collects every value reachable from v that mutate can
// change, unexported fields included.
func settableLeaves(v reflect.Value, out []reflect.Value) []reflect.Value {
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			out = settableLeaves(v.Field(i), out)
		}
		return out
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			out = settableLeaves(v.Index(i), out)
		}
		return out
	case reflect.Pointer:
		if !v.IsNil() {
			out = settableLeaves(v.Elem(), out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			out = settableLeaves(v.Index(i), out)
		}
	}
	return append(out, v)
}

// mutate changes v in place, reporting false when it cannot.
func mutate(v reflect.Value, rng *rand.Rand) bool {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		if rng.Intn(4) == 0 {
			v.SetFloat(math.NaN())
		} else {
			v.SetFloat(v.Float() + 1)
		}
	case reflect.Complex64, reflect.Complex128:
		v.SetComplex(v.Complex() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		} else {
			v.SetZero()
		}
	case reflect.Slice:
		switch {
		case v.IsNil():
			v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // nil to empty
		case v.Len() == 0:
			v.SetZero() // empty to nil
		default:
			v.Set(v.Slice(0, v.Len()-1))
		}
	case reflect.Map:
		switch {
		case v.IsNil():
			v.Set(reflect.MakeMap(v.Type()))
		case v.Len() > 0 && rng.Intn(2) == 0:
			v.SetZero()
		case v.Type().Key().Kind() == reflect.String:
			m := reflect.MakeMap(v.Type())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), it.Value())
			}
			m.SetMapIndex(reflect.ValueOf("added").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
			v.Set(m)
		default:
			return false
		}
	case reflect.Interface:
		if v.IsNil() {
			v.Set(reflect.ValueOf("set").Convert(reflect.TypeFor[any]()))
		} else {
			v.SetZero()
		}
	default:
		return false
	}
	return true
}

// copyEveryKind deep-copies an everyKind (funcs and channels shared, as
// they cannot be copied).
func copyEveryKind(in *everyKind) *everyKind {
	if in == nil {
		return nil
	}
	out := *in
	if in.P != nil {
		s := *in.P
		out.P = &s
	}
	if in.Sl != nil {
		out.Sl = append([]string{}, in.Sl...)
	}
	if in.Bytes != nil {
		out.Bytes = append([]byte{}, in.Bytes...)
	}
	if in.M != nil {
		out.M = make(map[string]string, len(in.M))
		for k, v := range in.M {
			out.M[k] = v
		}
	}
	if in.MI != nil {
		out.MI = make(map[string]int, len(in.MI))
		for k, v := range in.MI {
			out.MI[k] = v
		}
	}
	if s, ok := in.Iface.([]int); ok {
		out.Iface = append([]int{}, s...)
	}
	if in.Res != nil {
		out.Res = in.Res.DeepCopy()
	}
	if in.Bin != nil {
		out.Bin = make(map[string][]byte, len(in.Bin))
		for k, v := range in.Bin {
			out.Bin[k] = append([]byte(nil), v...)
		}
	}
	out.Next = copyEveryKind(in.Next)
	if in.Kids != nil {
		out.Kids = make([]everyKind, len(in.Kids))
		for i := range in.Kids {
			out.Kids[i] = *copyEveryKind(&in.Kids[i])
		}
	}
	return &out
}

// TestTypedCopiersCopyLikeTheGeneratedMethods: every built-in kind's typed
// copier makes a deep copy that equals its source and shares no memory with
// it, and its statusOver makes an object whose status is a copy of the
// request's and whose every other field is the stored object's. (The
// copiers that target packages register are checked the same way by
// TestRegisteredCopiersCopyLikeTheGeneratedMethods.)
func TestTypedCopiersCopyLikeTheGeneratedMethods(t *testing.T) {
	for typ, c := range builtinCopiers {
		checkTypedCopier(t, typ, c)
	}
}

// checkTypedCopier checks one struct type's typed copier against what
// the reflective path does: a deep copy equal to its source, sharing no
// memory with it; a statusOver taking the request's status (copied) and
// every other field of the stored object; a copyStatus copying the status
// alone.
func checkTypedCopier(t *testing.T, typ reflect.Type, c *typedCopier) {
	t.Helper()
	filler := randfill.New().RandSource(rand.New(rand.NewSource(2))).NilChance(0.2).NumElements(1, 2).MaxDepth(5)
	fresh := func() client.Object { return reflect.New(typ).Interface().(client.Object) }
	src, dst := fresh(), fresh()
	filler.Fill(src)
	c.copyInto(dst, src)
	if !reflect.DeepEqual(dst, src) {
		t.Errorf("%s: the typed copy differs from its source", typ)
	}
	if p := sharedMemory(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem(), typ.Name()); p != "" {
		t.Errorf("%s: the typed copy shares %s with its source", typ, p)
	}
	status, ok := typ.FieldByName("Status")
	if (c.statusOver != nil) != ok || (c.copyStatus != nil) != ok {
		t.Errorf("%s: has a Status field: %v; has a typed statusOver: %v, copyStatus: %v", typ, ok, c.statusOver != nil, c.copyStatus != nil)
	}
	if !ok || c.statusOver == nil {
		return
	}
	in, old, out := fresh(), fresh(), fresh()
	filler.Fill(in)
	filler.Fill(old)
	c.statusOver(out, in, old)
	vo, vi, vold := reflect.ValueOf(out).Elem(), reflect.ValueOf(in).Elem(), reflect.ValueOf(old).Elem()
	for i := 0; i < typ.NumField(); i++ {
		want := vold
		if i == status.Index[0] {
			want = vi
		}
		if !reflect.DeepEqual(vo.Field(i).Interface(), want.Field(i).Interface()) {
			t.Errorf("%s: statusOver's field %s is not the %s one", typ, typ.Field(i).Name, map[bool]string{true: "request's", false: "stored"}[i == status.Index[0]])
		}
	}
	if p := sharedMemory(vo.Field(status.Index[0]), vi.Field(status.Index[0]), "status"); p != "" {
		t.Errorf("%s: statusOver's status shares %s with the request's", typ, p)
	}
	if c.copyStatus == nil {
		return
	}
	cp, from := fresh(), fresh()
	filler.Fill(cp)
	filler.Fill(from)
	before := reflect.New(typ).Interface().(client.Object)
	c.copyInto(before, cp)
	c.copyStatus(cp, from)
	vc, vf, vb := reflect.ValueOf(cp).Elem(), reflect.ValueOf(from).Elem(), reflect.ValueOf(before).Elem()
	for i := 0; i < typ.NumField(); i++ {
		want := vb
		if i == status.Index[0] {
			want = vf
		}
		if !reflect.DeepEqual(vc.Field(i).Interface(), want.Field(i).Interface()) {
			t.Errorf("%s: copyStatus left field %s unlike the %s one", typ, typ.Field(i).Name, map[bool]string{true: "source's", false: "destination's own"}[i == status.Index[0]])
		}
	}
	if p := sharedMemory(vc.Field(status.Index[0]), vf.Field(status.Index[0]), "status"); p != "" {
		t.Errorf("%s: copyStatus's status shares %s with the source's", typ, p)
	}
}

// semKinds has the fields whose semantic comparison differs from
// reflect.DeepEqual's, and none on which it panics.
type semKinds struct {
	Sl  []string
	M   map[string]string
	Res corev1.ResourceList
	Bin map[string][]byte
	T   metav1.Time
	TP  *metav1.Time
	Q   resource.Quantity
	N   int
}

// TestDifferFuncEdges: the differFunc settles only differences the
// semantic comparison sees, and leaves a stored quantity as it was.
func TestDifferFuncEdges(t *testing.T) {
	differ := semanticDifferOf(reflect.TypeFor[semKinds]())
	if differ == nil {
		t.Fatal("semKinds has no differFunc")
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		a, b semKinds
		want bool // the semantic comparison finds them unequal
	}{
		{"nil and empty slice", semKinds{Sl: nil}, semKinds{Sl: []string{}}, false},
		{"empty and non-empty slice", semKinds{Sl: nil}, semKinds{Sl: []string{""}}, true},
		{"nil and empty map", semKinds{M: nil}, semKinds{M: map[string]string{}}, false},
		{"map keys", semKinds{M: map[string]string{"a": ""}}, semKinds{M: map[string]string{"b": ""}}, true},
		{"quantities written differently", semKinds{Res: corev1.ResourceList{"cpu": resource.MustParse("1")}}, semKinds{Res: corev1.ResourceList{"cpu": resource.MustParse("1000m")}}, false},
		{"quantities", semKinds{Q: resource.MustParse("1")}, semKinds{Q: resource.MustParse("2")}, true},
		{"one instant in two zones", semKinds{T: metav1.NewTime(at)}, semKinds{T: metav1.NewTime(at.In(time.FixedZone("x", 3600)))}, false},
		{"two instants", semKinds{T: metav1.NewTime(at)}, semKinds{T: metav1.NewTime(at.Add(time.Second))}, true},
		{"nil and set time", semKinds{}, semKinds{TP: &metav1.Time{}}, true},
		{"nil and empty bytes", semKinds{Bin: map[string][]byte{"k": nil}}, semKinds{Bin: map[string][]byte{"k": {}}}, false},
		{"a number", semKinds{N: 1}, semKinds{N: 2}, true},
	}
	for _, c := range cases {
		if got := !equality.Semantic.DeepEqual(&c.a, &c.b); got != c.want {
			t.Fatalf("%s: the semantic comparison says unequal=%v, the case says %v", c.name, got, c.want)
		}
		if differ(unsafe.Pointer(&c.a), unsafe.Pointer(&c.b), 0) && !c.want {
			t.Errorf("%s: the differFunc finds a difference the semantic comparison does not", c.name)
		}
		if !differ(unsafe.Pointer(&c.a), unsafe.Pointer(&c.b), 0) && c.want {
			t.Errorf("%s: the differFunc leaves a plain difference undecided", c.name)
		}
	}
	// Quantity.Cmp converts its receiver to a decimal when the other side
	// is one: the comparison must not convert a stored quantity.
	q, dec := resource.MustParse("1"), resource.MustParse("1")
	dec.AsDec()
	before := q.DeepCopy()
	a, b := semKinds{Q: q}, semKinds{Q: dec}
	differ(unsafe.Pointer(&a), unsafe.Pointer(&b), 0)
	if !reflect.DeepEqual(a.Q, before) {
		t.Error("comparing two quantities changed the first one's representation")
	}
}

// BenchmarkEqualFunc compares a randomly filled StatefulSet with its deep
// copy (equal: the whole object is walked) with its equalFunc and with
// reflect.DeepEqual, the comparison it replaces.
func BenchmarkEqualFunc(b *testing.B) {
	var a appsv1.StatefulSet
	randfill.New().RandSource(rand.New(rand.NewSource(3))).NilChance(0.3).NumElements(1, 2).MaxDepth(8).Fill(&a)
	c := a.DeepCopy()
	b.Run("equalFunc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !deepEqual(&a, c) {
				b.Fatal("a StatefulSet differs from its deep copy")
			}
		}
	})
	b.Run("reflect.DeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !reflect.DeepEqual(&a, c) {
				b.Fatal("a StatefulSet differs from its deep copy")
			}
		}
	})
}
