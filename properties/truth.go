package properties

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

// State is ground truth: the store's objects as rebuilt from the change
// events of a history (events whose Change is not ChangeNone), and the
// revision the last of them committed at.
//
// A State is built incrementally with Apply, one event at a time, in history
// order. Apply costs one map write per change event and copies nothing, so a
// State can follow a run online. Objects are shared with the events that
// carried them: they are never mutated, and callers of Get and List must not
// mutate them either.
//
// Look objects up by Go type with the package functions Get and List
// (properties.Get[*corev1.Pod](s, ns, name)): a misspelt type does not
// compile. The methods Get and List take a Kind string; with a scheme
// (UseScheme, which the simulator sets) a kind the scheme does not know
// panics with what to do instead of silently returning nothing.
//
// The zero value is not usable; call NewState.
type State struct {
	kinds map[string]map[string]stored // kind -> namespace/name -> object
	rev   model.Revision
	step  int // step of the last applied change event, 0 for none
	count int // number of objects held
	// sorted holds a kind's keys in order while no object of the kind
	// was added or removed since (a modification keeps the keys): the
	// monitors list the same few kinds at every change.
	sorted map[string][]string

	scheme     *runtime.Scheme
	knownKinds map[string]bool         // every Kind the scheme registers
	typeKinds  map[reflect.Type]string // Go type -> Kind, resolved once

	// applied counts the events applied (changes or not); faults is the
	// fault log of the liveness explanations, shared by every monitor of
	// the run that asks for it (faultLog), and faultsAt the count of
	// events it has observed.
	applied  int
	faults   faultLog
	faultsAt int
}

// NewState returns an empty store at revision 0.
func NewState() *State {
	return &State{kinds: make(map[string]map[string]stored)}
}

// stored is one object with the namespace its event named (the event, not
// the object's metadata, is authoritative).
type stored struct {
	namespace string
	obj       runtime.Object
	key       string // the map key it is stored under, kept for the next change
}

// matches reports whether the object is in namespace ("" for every
// namespace) and its labels match selector (nil matches everything).
func (st stored) matches(namespace string, selector labels.Selector) bool {
	if namespace != "" && st.namespace != namespace {
		return false
	}
	if selector != nil && !selector.Empty() {
		m, err := meta.Accessor(st.obj)
		if err != nil || !selector.Matches(labels.Set(m.GetLabels())) {
			return false
		}
	}
	return true
}

// Replay rebuilds ground truth from h after every event whose Step is at most
// step; step < 0 replays the whole history.
func Replay(h *model.History, step int) *State {
	s := NewState()
	for i := range h.Events {
		e := &h.Events[i]
		if step >= 0 && e.Step > step {
			break
		}
		s.Apply(e)
	}
	return s
}

// ObjectKey returns "namespace/name", or "name" for a cluster-scoped object,
// the key objects are stored and sorted under.
func ObjectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// appendObjectKey appends ObjectKey(namespace, name) to b.
func appendObjectKey(b []byte, namespace, name string) []byte {
	if namespace == "" {
		return append(b, name...)
	}
	b = append(b, namespace...)
	b = append(b, '/')
	return append(b, name...)
}

// Apply records e's change, if it has one: ChangeAdded and ChangeModified
// store e.Object under (e.Kind, e.Namespace/e.Name); ChangeDeleted removes the
// object. The revision becomes e.Rev. Events without a change are ignored.
//
// A change event without an Object (other than a deletion) is a broken
// history, a bug of whoever recorded it, and Apply panics on it.
func (s *State) Apply(e *model.Event) {
	s.applied++
	if e.Change == model.ChangeNone {
		return
	}
	// The key is looked up from a buffer, and built only for an object
	// the state does not hold yet: a modification stores under the key
	// the object is held under (every change event passes here).
	var buf [64]byte
	key := appendObjectKey(buf[:0], e.Namespace, e.Name)
	objs := s.kinds[e.Kind]
	switch e.Change {
	case model.ChangeAdded, model.ChangeModified:
		if e.Object == nil {
			panic(fmt.Sprintf("properties: step %d: %s change of %s %s carries no Object", e.Step, e.Change, e.Kind, ObjectKey(e.Namespace, e.Name)))
		}
		if objs == nil {
			objs = make(map[string]stored)
			s.kinds[e.Kind] = objs
		}
		if old, ok := objs[string(key)]; ok {
			objs[old.key] = stored{namespace: e.Namespace, obj: e.Object, key: old.key}
		} else {
			k := string(key)
			objs[k] = stored{namespace: e.Namespace, obj: e.Object, key: k}
			s.count++
			delete(s.sorted, e.Kind)
		}
	case model.ChangeDeleted:
		if old, ok := objs[string(key)]; ok {
			delete(objs, old.key)
			s.count--
			delete(s.sorted, e.Kind)
		}
	default:
		panic(fmt.Sprintf("properties: step %d: unknown change type %d", e.Step, e.Change))
	}
	if e.Rev > s.rev {
		s.rev = e.Rev
	}
	s.step = e.Step
}

// UseScheme makes the state check every kind it is asked for against
// scheme: a Kind string or Go type the scheme does not register panics
// (a property that asks for it is broken and would otherwise hold
// vacuously). It returns s.
func (s *State) UseScheme(scheme *runtime.Scheme) *State {
	s.scheme = scheme
	s.knownKinds = kindsOf(scheme)
	return s
}

// schemeKinds is the set of Kind names of one scheme, remembered with the
// number of types it had (a scheme only grows: a registration since shows
// as a larger count).
type schemeKinds struct {
	types int
	kinds map[string]bool
}

// knownKindsCache maps a *runtime.Scheme to its schemeKinds. Every world
// of an exploration (thousands, on several workers) asks for the kinds of
// the same scheme; the set is built once and then only read, so the
// workers share it.
var knownKindsCache sync.Map

// kindsOf returns the Kind names the scheme registers. The map is shared:
// never modify it.
func kindsOf(scheme *runtime.Scheme) map[string]bool {
	types := scheme.AllKnownTypes()
	if v, ok := knownKindsCache.Load(scheme); ok && v.(*schemeKinds).types == len(types) {
		return v.(*schemeKinds).kinds
	}
	kinds := make(map[string]bool, len(types))
	for gvk := range types {
		kinds[gvk.Kind] = true
	}
	knownKindsCache.Store(scheme, &schemeKinds{types: len(types), kinds: kinds})
	return kinds
}

// checkKind panics on a kind the scheme does not know.
func (s *State) checkKind(kind string) {
	if s.knownKinds == nil || s.knownKinds[kind] {
		return
	}
	var near []string
	for k := range s.knownKinds {
		if strings.EqualFold(k, kind) || strings.EqualFold(k+"s", kind) || strings.EqualFold(k, kind+"s") {
			near = append(near, k)
		}
	}
	sort.Strings(near)
	hint := ""
	if len(near) > 0 {
		hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	panic(fmt.Sprintf("properties: unknown kind %q%s: no type of that kind is registered in the scenario's scheme, so a lookup would always come back empty. "+
		"Kinds are case-sensitive and singular, e.g. \"Pod\"; look objects up by Go type instead: properties.Get[*corev1.Pod](s, namespace, name)", kind, hint))
}

// Get returns the object of that kind stored under namespace/name. Prefer
// the package function Get, which takes a Go type.
func (s *State) Get(kind, namespace, name string) (runtime.Object, bool) {
	s.checkKind(kind)
	return s.get(kind, namespace, name)
}

// get is Get for a kind taken from an event: known to exist.
func (s *State) get(kind, namespace, name string) (runtime.Object, bool) {
	st, ok := s.kinds[kind][ObjectKey(namespace, name)]
	return st.obj, ok
}

// List returns the objects of kind in namespace ("" for every namespace)
// whose labels match selector (nil matches everything), sorted by
// namespace/name. Prefer the package function List, which takes a Go type.
func (s *State) List(kind string, namespace string, selector labels.Selector) []runtime.Object {
	s.checkKind(kind)
	return s.list(kind, namespace, selector)
}

func (s *State) list(kind string, namespace string, selector labels.Selector) []runtime.Object {
	objs := s.kinds[kind]
	var out []runtime.Object
	for _, k := range s.sortedKeys(kind, objs) {
		if st := objs[k]; st.matches(namespace, selector) {
			out = append(out, st.obj)
		}
	}
	if out == nil {
		out = []runtime.Object{}
	}
	return out
}

// sortedKeys returns the keys of objs, kind's objects, in order: kept
// until an object of the kind is added or removed. Read it only.
func (s *State) sortedKeys(kind string, objs map[string]stored) []string {
	if keys, ok := s.sorted[kind]; ok {
		return keys
	}
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if s.sorted == nil {
		s.sorted = map[string][]string{}
	}
	s.sorted[kind] = keys
	return keys
}

// gracefulDeletionPending reports whether some object's graceful deletion
// is under way at logical time now: its deletionTimestamp (the end of its
// grace period) is still ahead. The store changes at that deadline by
// itself (the kubelet removes the pod), whatever the controllers do. An
// object held by a finalizer has a deletionTimestamp in the past and does
// not count: its removal waits on whoever holds the finalizer.
func (s *State) gracefulDeletionPending(now model.Time) bool {
	wall := now.Wall()
	for _, objs := range s.kinds {
		for _, o := range objs {
			m, err := meta.Accessor(o.obj)
			if err != nil {
				continue
			}
			if ts := m.GetDeletionTimestamp(); ts != nil && ts.Time.After(wall) {
				return true // existence only, which no map order changes
			}
		}
	}
	return false
}

// Revision is the revision of the last change applied (0 for an empty
// history).
func (s *State) Revision() model.Revision { return s.rev }

// Step is the step of the last change event applied (0 for none): the state
// is the store as it was right after that step.
func (s *State) Step() int { return s.step }

// Len is the number of objects held, of every kind.
func (s *State) Len() int { return s.count }

// kindOfType is the Kind objects of Go type t are stored under: the kind
// the scheme registers t as, or (without a scheme) the type's name, which is
// the Kind by the convention every scheme registration follows.
func (s *State) kindOfType(t reflect.Type) string {
	if k, ok := s.typeKinds[t]; ok {
		return k
	}
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("properties: Get/List need a pointer to an API struct type, e.g. properties.List[*corev1.Pod]; got %v", t))
	}
	kind := t.Elem().Name()
	if s.scheme != nil {
		obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
		if !ok {
			panic(fmt.Sprintf("properties: %v is not a runtime.Object", t))
		}
		gvks, _, err := s.scheme.ObjectKinds(obj)
		if err != nil || len(gvks) == 0 {
			panic(fmt.Sprintf("properties: type %v is not registered in the scenario's scheme, so no object of it can be in the store; register it (its AddToScheme) or look up the type you meant", t))
		}
		kind = gvks[0].Kind
	}
	if s.typeKinds == nil {
		s.typeKinds = make(map[reflect.Type]string)
	}
	s.typeKinds[t] = kind
	return kind
}

// Get returns the object of Go type T (a pointer to an API struct, e.g.
// *corev1.Pod) stored under namespace/name. A type the state's scheme does
// not register panics (see State.UseScheme).
func Get[T runtime.Object](s *State, namespace, name string) (T, bool) {
	var zero T
	kind := s.kindOfType(reflect.TypeOf(zero))
	st, ok := s.kinds[kind][ObjectKey(namespace, name)]
	if !ok {
		return zero, false
	}
	obj, ok := st.obj.(T)
	if !ok {
		panic(fmt.Sprintf("properties: the %s %s in the store is a %T, not a %T", kind, ObjectKey(namespace, name), st.obj, zero))
	}
	return obj, true
}

// List returns the objects of Go type T (e.g. *corev1.Pod) in namespace (""
// for every namespace) whose labels match selector (nil matches everything),
// sorted by namespace/name.
func List[T runtime.Object](s *State, namespace string, selector labels.Selector) []T {
	var zero T
	kind := s.kindOfType(reflect.TypeOf(zero))
	// As State.list, straight into a []T: the monitors list a few kinds
	// at every change they judge.
	objs := s.kinds[kind]
	keys := s.sortedKeys(kind, objs)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		st := objs[k]
		if !st.matches(namespace, selector) {
			continue
		}
		obj, ok := st.obj.(T)
		if !ok {
			panic(fmt.Sprintf("properties: a %s in the store is a %T, not a %T", kind, st.obj, zero))
		}
		out = append(out, obj)
	}
	return out
}

// faultLog returns the run's fault log having observed e, the event
// being shown to the monitors before it is applied: the first monitor to
// ask at an event feeds it, the others get it as is. Every monitor that
// explains faults asks at every event it sees, so the log holds what a
// log of its own would hold (TestSharedFaultLogExplainsAsOwnLogs). A
// driver of monitors must Apply every event after showing it, as Run
// does.
func (s *State) faultLog(e *model.Event) *faultLog {
	if s.faultsAt != s.applied+1 {
		s.faults.observe(s, e)
		s.faultsAt = s.applied + 1
	}
	return &s.faults
}
