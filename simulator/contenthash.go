package simulator

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The content hash of a stored object (explorerHooks.contentHash) must put
// two objects in one class exactly when their JSON encodings (encoding/json,
// resourceVersion and managedFields left out) are equal: equal encodings,
// one hash, so that states the explorer merged stay merged; different
// encodings, different hashes (but for 64-bit collisions), so that no two
// distinct states merge. Encoding every object to JSON to hash it was most
// of the cost of StateHash; the hash below walks the object's fields
// instead, with an encoder compiled once per Go type, and follows
// encoding/json's rules wherever they make two different values encode
// alike:
//
//   - a field is left out when encoding/json leaves it out: "-", unexported,
//     omitempty and empty, omitzero and zero (by the type's IsZero method
//     where it has one, as encoding/json decides);
//   - a nil pointer, slice, map or interface is null, as is a pointer to a
//     null;
//   - map entries are hashed in key order;
//   - a type with a MarshalJSON or MarshalText method (metav1.Time,
//     resource.Quantity, intstr.IntOrString, ...) is hashed by what the
//     method returns, as encoding/json would call it (a pointer-receiver
//     method only where the value is addressable); metav1.Time, in every
//     object, by its Unix second, which is what its JSON form (RFC 3339 in
//     UTC, to the second) tells apart;
//   - what the walk does not model is hashed by its JSON encoding:
//     interface values (an int64 and a float64 of the same value encode
//     alike), maps with keys that are not strings, structs with embedded
//     pointers or unexported embedded structs, or with field names that
//     collide after embedding.
//
// Everything is written with a tag byte first and lengths before contents,
// so the byte stream hashed is a prefix-free encoding of the JSON value.
// TestContentHashClassesAreJSONs compares the classes with JSON's over the
// objects of the shipped scenarios' runs and over values made to differ in
// one field or to encode alike.

// contentEncoder writes the content of v (of the type it was compiled for)
// into h.
type contentEncoder func(h *contentHash, v reflect.Value)

// contentHash is an FNV-64a hash being written, with the scratch the
// encoders reuse.
type contentHash struct {
	sum  uint64
	keys []string // scratch for a string map's sorted keys
}

// Tags, written before each value.
const (
	tagNull byte = iota + 1
	tagFalse
	tagTrue
	tagInt
	tagUint
	tagFloat
	tagString
	tagBytes
	tagList
	tagMap
	tagStruct
	tagMarshaled
	tagText
	tagJSON
	tagTime
)

func (h *contentHash) byte(b byte) {
	h.sum ^= uint64(b)
	h.sum *= fnvPrime64
}

func (h *contentHash) u64(v uint64) {
	for range 8 {
		h.byte(byte(v))
		v >>= 8
	}
}

func (h *contentHash) bytes(b []byte) {
	h.u64(uint64(len(b)))
	for _, c := range b {
		h.byte(c)
	}
}

func (h *contentHash) str(s string) {
	h.u64(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
	metaTimeType      = reflect.TypeFor[metav1.Time]()
)

// contentEncoders caches the compiled encoders by type (a *encoderCell);
// compiling holds compileMu, so recursive types see their own cell.
var (
	contentEncoders sync.Map
	compileMu       sync.Mutex
)

type encoderCell struct{ enc contentEncoder }

// encoderOf returns the encoder of values of type t.
func encoderOf(t reflect.Type) contentEncoder {
	if c, ok := contentEncoders.Load(t); ok {
		return c.(*encoderCell).enc
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	building := map[reflect.Type]*encoderCell{}
	enc := compileEncoder(t, building)
	for typ, cell := range building {
		contentEncoders.LoadOrStore(typ, cell)
	}
	return enc
}

// compileEncoder returns t's encoder, compiling it into building (cells
// for types being compiled, so that a recursive type refers to its own).
func compileEncoder(t reflect.Type, building map[reflect.Type]*encoderCell) contentEncoder {
	if c, ok := contentEncoders.Load(t); ok {
		return c.(*encoderCell).enc
	}
	if c, ok := building[t]; ok {
		return func(h *contentHash, v reflect.Value) { c.enc(h, v) }
	}
	cell := &encoderCell{}
	building[t] = cell
	cell.enc = newContentEncoder(t, true, building)
	return cell.enc
}

// newContentEncoder follows encoding/json's newTypeEncoder: marshalers
// first (a pointer-receiver one only when the value is addressable), then
// the kind.
func newContentEncoder(t reflect.Type, allowAddr bool, building map[reflect.Type]*encoderCell) contentEncoder {
	if t.Kind() == reflect.Interface {
		// Even an interface type with a MarshalJSON method: encoding/json
		// writes null for a nil one.
		return encodeJSON
	}
	if t == metaTimeType {
		return encodeMetaTime
	}
	if t.Kind() == reflect.Pointer && t.Elem() == metaTimeType {
		return func(h *contentHash, v reflect.Value) {
			if v.IsNil() {
				h.byte(tagNull)
				return
			}
			encodeMetaTime(h, v.Elem())
		}
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(marshalerType) {
		return condAddr(encodeAddrMarshaler, newContentEncoder(t, false, building))
	}
	if t.Implements(marshalerType) {
		return encodeMarshaler
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(textMarshalerType) {
		return condAddr(encodeAddrText, newContentEncoder(t, false, building))
	}
	if t.Implements(textMarshalerType) {
		return encodeText
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(h *contentHash, v reflect.Value) {
			if v.Bool() {
				h.byte(tagTrue)
			} else {
				h.byte(tagFalse)
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(h *contentHash, v reflect.Value) { h.byte(tagInt); h.u64(uint64(v.Int())) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(h *contentHash, v reflect.Value) { h.byte(tagUint); h.u64(v.Uint()) }
	case reflect.Float32, reflect.Float64:
		return func(h *contentHash, v reflect.Value) { h.byte(tagFloat); h.u64(math.Float64bits(v.Float())) }
	case reflect.String:
		return func(h *contentHash, v reflect.Value) { h.byte(tagString); h.str(v.String()) }
	case reflect.Pointer:
		elem := compileEncoder(t.Elem(), building)
		return func(h *contentHash, v reflect.Value) {
			if v.IsNil() {
				h.byte(tagNull)
				return
			}
			elem(h, v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p := reflect.PointerTo(t.Elem())
			if !p.Implements(marshalerType) && !p.Implements(textMarshalerType) {
				return func(h *contentHash, v reflect.Value) {
					if v.IsNil() {
						h.byte(tagNull)
						return
					}
					h.byte(tagBytes)
					h.bytes(v.Bytes())
				}
			}
		}
		elem := compileEncoder(t.Elem(), building)
		return func(h *contentHash, v reflect.Value) {
			if v.IsNil() {
				h.byte(tagNull)
				return
			}
			n := v.Len()
			h.byte(tagList)
			h.u64(uint64(n))
			for i := range n {
				elem(h, v.Index(i))
			}
		}
	case reflect.Array:
		elem := compileEncoder(t.Elem(), building)
		return func(h *contentHash, v reflect.Value) {
			n := v.Len()
			h.byte(tagList)
			h.u64(uint64(n))
			for i := range n {
				elem(h, v.Index(i))
			}
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) {
			return encodeJSON
		}
		if t == stringMapType {
			return encodeStringMap // labels, annotations, selectors
		}
		elem := compileEncoder(t.Elem(), building)
		return func(h *contentHash, v reflect.Value) {
			if v.IsNil() {
				h.byte(tagNull)
				return
			}
			h.byte(tagMap)
			h.u64(uint64(v.Len()))
			type entry struct {
				key string
				val reflect.Value
			}
			entries := make([]entry, 0, v.Len())
			for it := v.MapRange(); it.Next(); {
				entries = append(entries, entry{it.Key().String(), it.Value()})
			}
			slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
			for _, e := range entries {
				h.str(e.key)
				elem(h, e.val)
			}
		}
	case reflect.Struct:
		return newStructEncoder(t, building)
	}
	return encodeJSON // interfaces, and what encoding/json refuses
}

// encodeStringMap hashes a map[string]string in key order.
func encodeStringMap(h *contentHash, v reflect.Value) {
	if v.IsNil() {
		h.byte(tagNull)
		return
	}
	m := v.Interface().(map[string]string)
	h.byte(tagMap)
	h.u64(uint64(len(m)))
	start := len(h.keys)
	for k := range m {
		h.keys = append(h.keys, k)
	}
	keys := h.keys[start:]
	slices.Sort(keys)
	for _, k := range keys {
		h.str(k)
		h.byte(tagString)
		h.str(m[k])
	}
	h.keys = h.keys[:start]
}

// contentField is a field of a struct as encoding/json writes it.
type contentField struct {
	index     int
	omitEmpty bool
	isZero    func(reflect.Value) bool // omitzero
	enc       contentEncoder
}

// newStructEncoder hashes the fields encoding/json writes, each with its
// position; an embedded struct without a JSON name (whose fields
// encoding/json writes inline) is hashed as a nested value. A struct whose
// field set that does not capture exactly (see the list at the top) is
// hashed by its JSON encoding.
func newStructEncoder(t reflect.Type, building map[reflect.Type]*encoderCell) contentEncoder {
	if !plainJSONStruct(t, map[string]bool{}) {
		return encodeJSON
	}
	var fields []contentField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		opts := tagOptions(tag)
		f := contentField{index: i, omitEmpty: slices.Contains(opts, "omitempty"), enc: compileEncoder(sf.Type, building)}
		if slices.Contains(opts, "omitzero") {
			f.isZero = zeroTest(sf.Type)
		}
		fields = append(fields, f)
	}
	// Each field written is its position, then its value; the end is a
	// position no field has.
	wide := t.NumField() >= 0xff // positions take 8 bytes, not 1
	return func(h *contentHash, v reflect.Value) {
		h.byte(tagStruct)
		for _, f := range fields {
			fv := v.Field(f.index)
			if (f.omitEmpty && isEmptyJSONValue(fv)) || (f.isZero != nil && f.isZero(fv)) {
				continue
			}
			if wide {
				h.u64(uint64(f.index))
			} else {
				h.byte(byte(f.index))
			}
			f.enc(h, fv)
		}
		if wide {
			h.u64(math.MaxUint64)
		} else {
			h.byte(0xff)
		}
	}
}

// plainJSONStruct reports whether encoding/json writes t's fields as the
// walk hashes them: every embedded field it flattens is an exported struct
// held by value (nested in turn), and no two written names collide (where
// encoding/json would drop or shadow one).
func plainJSONStruct(t reflect.Type, names map[string]bool) bool {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name := tagName(tag)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				return false // flattened when non-nil
			}
			if ft.Kind() == reflect.Struct {
				if !sf.IsExported() || reflect.PointerTo(ft).Implements(marshalerType) || reflect.PointerTo(ft).Implements(textMarshalerType) {
					return false
				}
				if !plainJSONStruct(ft, names) {
					return false
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if names[name] {
			return false
		}
		names[name] = true
	}
	return true
}

func tagName(tag string) string {
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

func tagOptions(tag string) []string {
	var opts []string
	name := tagName(tag)
	rest := tag[len(name):]
	for len(rest) > 0 {
		rest = rest[1:] // the comma
		opt := tagName(rest)
		opts = append(opts, opt)
		rest = rest[len(opt):]
	}
	return opts
}

// isEmptyJSONValue is encoding/json's test for omitempty.
func isEmptyJSONValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// zeroTest is encoding/json's test for omitzero on a field of type t.
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	type isZeroer interface{ IsZero() bool }
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// condAddr uses addr for an addressable value, else other, as
// encoding/json does for a type whose pointer has the marshaler.
func condAddr(addr, other contentEncoder) contentEncoder {
	return func(h *contentHash, v reflect.Value) {
		if v.CanAddr() {
			addr(h, v)
		} else {
			other(h, v)
		}
	}
}

func encodeMarshaler(h *contentHash, v reflect.Value) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		h.byte(tagNull)
		return
	}
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		panic("simulator: hashing a " + v.Type().String() + ": " + err.Error())
	}
	h.byte(tagMarshaled)
	h.bytes(b)
}

func encodeAddrMarshaler(h *contentHash, v reflect.Value) { encodeMarshaler(h, v.Addr()) }

func encodeText(h *contentHash, v reflect.Value) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		h.byte(tagNull)
		return
	}
	b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		panic("simulator: hashing a " + v.Type().String() + ": " + err.Error())
	}
	h.byte(tagText)
	h.bytes(b)
}

func encodeAddrText(h *contentHash, v reflect.Value) { encodeText(h, v.Addr()) }

// encodeJSON hashes v's JSON encoding, as encoding/json would write it in
// place (a pointer-receiver marshaler only for an addressable value).
func encodeJSON(h *contentHash, v reflect.Value) {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface()
	} else {
		x = v.Interface()
	}
	b, err := json.Marshal(x)
	if err != nil {
		panic("simulator: hashing a " + v.Type().String() + ": " + err.Error())
	}
	h.byte(tagJSON)
	h.bytes(b)
}

// encodeMetaTime hashes a metav1.Time as its JSON form tells it apart:
// null when zero, else its second (MarshalJSON writes RFC 3339 in UTC,
// without fractions).
func encodeMetaTime(h *contentHash, v reflect.Value) {
	var t metav1.Time
	if v.CanAddr() {
		t = *(*metav1.Time)(v.Addr().UnsafePointer())
	} else {
		t = v.Interface().(metav1.Time)
	}
	if t.IsZero() {
		h.byte(tagNull)
		return
	}
	h.byte(tagTime)
	h.u64(uint64(t.Unix()))
}
