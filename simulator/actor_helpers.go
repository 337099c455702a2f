package simulator

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// The helpers the built-in actors (actor_*.go) share: the memo of their
// enabled steps, unrecorded reads of the store's own objects, and the pod
// predicates they judge pods by.

// stepMemo remembers the steps an actor computed at one memoKey. The
// built-in actors read nothing but the store (and the kubelet the clock),
// most of them only a few of its kinds: their enabled steps only change
// when one of those kinds does (tablesKey), or, for the garbage collector,
// which reads every kind, when the store's revision does. Most scheduling
// points (reads, deliveries, clock ticks, writes of other kinds) then cost
// one comparison.
type stepMemo struct{ revisionMemo[[]Step] }

// lookup appends the steps remembered at key to buf, if any.
func (m *stepMemo) lookup(key memoKey, buf []Step) ([]Step, bool) {
	if steps, ok := m.get(key); ok {
		return append(buf, steps...), true
	}
	return buf, false
}

// save remembers the steps appended to buf from index from on, at key.
func (m *stepMemo) save(key memoKey, buf []Step, from int) {
	m.set(key, append(m.last()[:0], buf[from:]...))
}

// storedList returns the stored objects of kind k in key order (the store's
// own objects: read only). Namespace "" means all namespaces. The slice is
// shared (see sortedTables): read it, never modify or append to it.
func storedList(w *World, k *kindInfo, namespace string) []client.Object {
	t := w.Store.tables[k]
	if t == nil || len(t.objects) == 0 {
		return nil
	}
	if namespace != "" && !k.namespaced {
		return selectSorted(t.objects, &ListOptions{Namespace: namespace})
	}
	st := w.lists.of(t)
	if namespace == "" {
		return st.objs
	}
	// Keys are namespace/name, and neither part may hold a "/": the
	// namespace's objects are the keys from namespace+"/" (inclusive) to
	// namespace+"0" ('/'+1, exclusive), one run of the sorted keys.
	lo := sort.Search(len(st.keys), func(i int) bool { return !keyBefore(st.keys[i], namespace, '/') })
	hi := lo + sort.Search(len(st.keys)-lo, func(i int) bool { return !keyBefore(st.keys[lo+i], namespace, '0') })
	return st.objs[lo:hi:hi]
}

// keyBefore reports whether key sorts before prefix+string(last), without
// building that string.
func keyBefore(key, prefix string, last byte) bool {
	if len(key) <= len(prefix) {
		// key is below, or a prefix of, prefix+last: it sorts first
		// unless it is above prefix's start.
		return key <= prefix[:len(key)]
	}
	if c := strings.Compare(key[:len(prefix)], prefix); c != 0 {
		return c < 0
	}
	return key[len(prefix)] < last
}

// sortedTables keeps, per table of one world's store, the table's objects in
// key order as of the table's version: the number of changes it has had.
// The store changes a table's objects only by committing a change, which
// appends to the table's changes, so while that count stands the list is
// right. The built-in actors list a few kinds at every revision while most
// writes change other kinds; the lists are rebuilt only for the kind that
// changed.
type sortedTables struct {
	byTable map[*kindData]*sortedTable
	// tables holds the store's tables by kind (kindInfo.order), each
	// once it exists: a store never replaces a table once made, and the
	// memo keys of every decision read a few of them (tableOf).
	store  *Store
	tables []*kindData
}

// tableOf returns s's table of kind k, nil when the store has none yet
// (it is not made here).
func (l *sortedTables) tableOf(s *Store, k *kindInfo) *kindData {
	if l.store != s {
		l.store, l.tables = s, nil
	}
	if k.order < len(l.tables) {
		if t := l.tables[k.order]; t != nil {
			return t
		}
	}
	t := s.tables[k]
	if t != nil {
		if k.order >= len(l.tables) {
			l.tables = append(l.tables, make([]*kindData, k.order+1-len(l.tables))...)
		}
		l.tables[k.order] = t
	}
	return t
}

type sortedTable struct {
	version int // len(changes) when built
	keys    []string
	objs    []client.Object
}

// of returns t's objects in key order, rebuilding the list if t changed.
// The slices are shared until the next change of t: callers read them only.
func (l *sortedTables) of(t *kindData) *sortedTable {
	if l.byTable == nil {
		l.byTable = map[*kindData]*sortedTable{}
	}
	st := l.byTable[t]
	if st == nil {
		st = &sortedTable{version: -1}
		l.byTable[t] = st
	}
	if st.version == len(t.changes) {
		return st
	}
	// New slices, never the old ones' storage: a caller may still hold
	// the previous version (a step's closure, a list being iterated).
	keys := make([]string, 0, len(t.objects))
	for key := range t.objects {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	objs := make([]client.Object, len(keys))
	for i, key := range keys {
		objs[i] = t.objects[key]
	}
	st.version, st.keys, st.objs = len(t.changes), keys, objs[:len(objs):len(objs)]
	return st
}

// tableVersion is the number of changes kind k's table has had (0 for a
// kind never written).
func (w *World) tableVersion(k *kindInfo) int {
	if t := w.lists.tableOf(w.Store, k); t != nil {
		return len(t.changes)
	}
	return 0
}

// tablesKey is the memo key of a value computed from the tables of kinds
// a, b and c alone (b and c may be nil), and from the clock when clock is
// non-nil. Each table's version only grows, so their sum stands exactly
// while each of them stands; a memo that always builds its key from the
// same kinds compares like with like.
func tablesKey(w *World, clock *model.Clock, a, b, c *kindInfo) memoKey {
	v := w.tableVersion(a)
	if b != nil {
		v += w.tableVersion(b)
	}
	if c != nil {
		v += w.tableVersion(c)
	}
	key := memoKey{store: w.Store, rev: model.Revision(v)}
	if clock != nil {
		key.at = clock.Now()
	}
	return key
}

// storedGet returns the stored object of kind k (read only).
func storedGet(w *World, k *kindInfo, namespace, name string) (client.Object, bool) {
	t := w.Store.tables[k]
	if t == nil {
		return nil, false
	}
	obj, ok := t.objects[objectKey(k, namespace, name)]
	return obj, ok
}

// actorKinds are the kinds the built-in actors read at every decision,
// resolved once per world (the registry's lookup by reflect.Type is a
// map access with an interface key, at every call).
type actorKinds struct {
	pod, claim, sts, ns *kindInfo
	stsTried, nsTried   bool
}

// podKind is the Pod kind (panics as kindOf when the scheme lacks it).
func (w *World) podKind() *kindInfo {
	if w.kinds.pod == nil {
		w.kinds.pod = w.kindOf(protoPod)
	}
	return w.kinds.pod
}

// claimKind is the PersistentVolumeClaim kind (panics as kindOf when the
// scheme lacks it).
func (w *World) claimKind() *kindInfo {
	if w.kinds.claim == nil {
		w.kinds.claim = w.kindOf(protoClaim)
	}
	return w.kinds.claim
}

// podStatusRequest is the request of a status update of the stored pod p:
// its status deep-copied, for the caller to change, and every other field
// shared with p. The store takes nothing but the status and the
// preconditions from a status update, the client's copy-back replaces the
// request's fields instead of writing into them, and the caller drops the
// request after the call; so nothing writes into what p shares, and the
// rest of the pod is not copied for nothing.
func podStatusRequest(p *corev1.Pod) *corev1.Pod {
	np := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	p.Status.DeepCopyInto(&np.Status)
	return np
}

// Prototypes used only to resolve kinds; never written.
var (
	protoPod   = &corev1.Pod{}
	protoClaim = &corev1.PersistentVolumeClaim{}
)

// nsKey is the namespace/name key step labels name objects by.
func nsKey(namespace, name string) string { return namespace + "/" + name }

// beingDeleted: the object has a deletionTimestamp (finalizers or a grace
// period keep it stored).
func beingDeleted(obj metav1.Object) bool { return obj.GetDeletionTimestamp() != nil }

// podRunningAndReady: phase Running and condition Ready True.
func podRunningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return p.Status.Conditions[i].Status == corev1.ConditionTrue
		}
	}
	return false
}

// podPending: not yet started (no phase, or Pending).
func podPending(p *corev1.Pod) bool {
	return p.Status.Phase == "" || p.Status.Phase == corev1.PodPending
}

// podTerminated: every container has exited for good (Succeeded or
// Failed).
func podTerminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// PodServing reports whether a pod serves: Running, Ready, not being
// deleted. Workload wait conditions and properties ask this of ground truth.
func PodServing(p *corev1.Pod) bool { return !beingDeleted(p) && podRunningAndReady(p) }
