package properties

import (
	"fmt"
	"sort"

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
// The zero value is not usable; call NewState.
type State struct {
	kinds map[string]map[string]stored // kind -> namespace/name -> object
	rev   model.Revision
	step  int // step of the last applied change event, 0 for none
	count int // number of objects held
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

// Apply records e's change, if it has one: ChangeAdded and ChangeModified
// store e.Object under (e.Kind, e.Namespace/e.Name); ChangeDeleted removes the
// object. The revision becomes e.Rev. Events without a change are ignored.
//
// A change event without an Object (other than a deletion) is a broken
// history, a bug of whoever recorded it, and Apply panics on it.
func (s *State) Apply(e *model.Event) {
	if e.Change == model.ChangeNone {
		return
	}
	key := ObjectKey(e.Namespace, e.Name)
	objs := s.kinds[e.Kind]
	switch e.Change {
	case model.ChangeAdded, model.ChangeModified:
		if e.Object == nil {
			panic(fmt.Sprintf("properties: step %d: %s change of %s %s carries no Object", e.Step, e.Change, e.Kind, key))
		}
		if objs == nil {
			objs = make(map[string]stored)
			s.kinds[e.Kind] = objs
		}
		if _, ok := objs[key]; !ok {
			s.count++
		}
		objs[key] = stored{namespace: e.Namespace, obj: e.Object}
	case model.ChangeDeleted:
		if _, ok := objs[key]; ok {
			delete(objs, key)
			s.count--
		}
	default:
		panic(fmt.Sprintf("properties: step %d: unknown change type %d", e.Step, e.Change))
	}
	if e.Rev > s.rev {
		s.rev = e.Rev
	}
	s.step = e.Step
}

// Get returns the object of that kind stored under namespace/name.
func (s *State) Get(kind, namespace, name string) (runtime.Object, bool) {
	st, ok := s.kinds[kind][ObjectKey(namespace, name)]
	return st.obj, ok
}

// List returns the objects of kind in namespace ("" for every namespace)
// whose labels match selector (nil matches everything), sorted by
// namespace/name.
func (s *State) List(kind string, namespace string, selector labels.Selector) []runtime.Object {
	objs := s.kinds[kind]
	keys := make([]string, 0, len(objs))
	for k, st := range objs {
		if namespace != "" && st.namespace != namespace {
			continue
		}
		if selector != nil && !selector.Empty() {
			m, err := meta.Accessor(st.obj)
			if err != nil || !selector.Matches(labels.Set(m.GetLabels())) {
				continue
			}
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]runtime.Object, len(keys))
	for i, k := range keys {
		out[i] = objs[k].obj
	}
	return out
}

// Revision is the revision of the last change applied (0 for an empty
// history).
func (s *State) Revision() model.Revision { return s.rev }

// Step is the step of the last change event applied (0 for none): the state
// is the store as it was right after that step.
func (s *State) Step() int { return s.step }

// Len is the number of objects held, of every kind.
func (s *State) Len() int { return s.count }
