package simulator

import (
	"encoding/binary"
	"hash"
	"hash/fnv"
	"reflect"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Hasher is implemented by actors with state of their own (an external
// system's data), so that World.StateHash covers it.
type Hasher interface {
	HashState(h hash.Hash64)
}

// StateHash fingerprints everything that determines the world's future,
// for the exhaustive explorer's dedup: the store's contents (object content,
// with every resourceVersion and the head revision unless the scenario
// declares OpaqueResourceVersions; without them the same state reached
// through differently ordered writes matches), paused watch caches (their content,
// the changes they hold back, and whether anything may have read them
// behind the store; hashPaused), each controller's
// apiserver, informer contents and queue, the watch events each informer has
// not received yet (in order, with the ones a drop fault took), whether each
// object a cache or an informer holds is the store's current revision of it
// (an update from a stale copy conflicts, from a fresh one it succeeds),
// external systems' state, the workload's position, the fault budget, the
// phase, the clock, and the property monitors' state (a NoStuckReconcile
// streak can be reported in one future and not in another).
//
// It leaves out the number of steps taken: the same state reached after a
// different number of steps has the same futures, shifted, unless the step
// bound (or the forced end of the fault phase at two thirds of it) cuts
// one of them. The exhaustive explorer keeps the depth of each state it
// visits beside the fingerprint, merges visits at different depths, and
// checks afterwards that the bound cut no future a merge relied on
// (explore/exhaustive.go, visitedTable and boundsHeld).
//
// It returns false when the future is not a function of what it can see:
// while a reconcile is in flight (a reconciler's local variables are not
// observable), while a property monitor has no fingerprint
// (properties.StateHasher), or when a controller keeps memory and the
// world does not keep its digest (its chooser merges no states). Such
// states are never merged.
//
// It assumes what controller-runtime asks of reconcilers: a reconciler
// keeps no memory between reconciles other than what it wrote to the API or
// an external system (a crash starts a fresh one anyway), unless its
// ControllerSpec says KeepsMemory, in which case it adds the digest of all
// its incarnation was told (reconcilerMemory); external systems with state
// implement Hasher.
func (w *World) StateHash() (uint64, bool) { return w.stateHash(true) }

// EndStateHash fingerprints the state a run ended in, to count distinct
// outcomes (the sampling strategies' states): StateHash without the
// digests of the controllers that keep memory, which a world keeps only
// for a chooser that merges states. Two ends it calls equal are the same
// world, whatever the controllers remember; a search must not merge on it.
func (w *World) EndStateHash() (uint64, bool) { return w.stateHash(false) }

// stateHash is StateHash, with the memory digests (and false when a
// controller keeps memory without one) when withMemory is set.
func (w *World) stateHash(withMemory bool) (uint64, bool) {
	for _, h := range w.hosts {
		if h.run != nil || withMemory && h.spec.keepsMemory && h.memory == nil {
			return 0, false
		}
	}
	f := newFingerprint()
	hh, put, putS := f.h, f.put, f.putS
	if !w.props.hashState(hh) {
		return 0, false
	}
	// Without Scenario.OpaqueResourceVersions, every resourceVersion is
	// part of the state (hashObjects, hashChange) and so is the head,
	// which the next write's resourceVersion follows. StoreHash never
	// holds them.
	w.explorer.hashRevisions = !w.Scenario.OpaqueResourceVersions
	if w.explorer.hashRevisions {
		put(uint64(w.Store.Revision()))
	}
	w.hashStore(f)
	w.faults.hashPaused(w, f)
	for _, h := range w.hosts {
		putS(string(h.actor))
		put(uint64(h.server.ID))
		for _, inf := range h.informers {
			putS(inf.kind.gvk.Kind)
			w.hashObjects(hh, inf.kind, inf.objects, put, putS)
			w.hashPending(inf, put, putS)
			if inf.lost {
				put(2)
			}
		}
		for _, r := range h.queue.ready {
			putS(r.String())
		}
		put(uint64(len(h.queue.timers)))
		for _, t := range h.queue.timers {
			put(uint64(t.at - w.Clock.Now()))
			putS(t.req.String())
		}
		reqs := make([]reconcile.Request, 0, len(h.queue.failures))
		for r := range h.queue.failures {
			reqs = append(reqs, r)
		}
		slices.SortFunc(reqs, func(a, b reconcile.Request) int { return strings.Compare(a.String(), b.String()) })
		for _, r := range reqs {
			putS(r.String())
			put(uint64(h.queue.failures[r]))
		}
		if withMemory && h.memory != nil {
			put(h.memory.digest())
		}
	}
	w.hashExternals(f)
	w.workload.hashState(w.Clock.Now(), f)
	w.faults.hashBudget(f)
	w.sched.hashState(w.Clock.Now(), f)
	w.explorer.hashRevisions = false
	return hh.Sum64(), true
}

// hashObjects adds a map of objects in key order. For a cache's or an
// informer's copy of kind k (k non-nil) it adds whether each object is the
// store's current revision of it: contents hash without resourceVersion,
// and a copy with the head's content but an older resourceVersion behaves
// differently on update.
func (w *World) hashObjects(hh hash.Hash64, k *kindInfo, objects map[string]client.Object, put func(uint64), putS func(string)) {
	// The keys' buffer is reused: every decision hashes every table and
	// informer.
	keys := w.explorer.keys[:0]
	for key := range objects {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	w.explorer.keys = keys
	put(uint64(len(keys)))
	for _, key := range keys {
		putS(key)
		obj := objects[key]
		h := w.explorer.contentHash(obj)
		if k != nil {
			if head, ok := w.Store.peek(k, key); ok && head == obj {
				h ^= 1 // stored objects are immutable: same pointer, same revision
			}
		}
		put(h)
		if w.explorer.hashRevisions {
			putS(obj.GetResourceVersion())
		}
	}
}

// hashPending adds the watch events the informer has not received yet, in
// order: what it will see, and which of them a drop fault took away.
func (w *World) hashPending(inf *informer, put func(uint64), putS func(string)) {
	if !inf.hasPending() {
		put(0)
		return
	}
	changes := inf.server.store.table(inf.kind).changes[:inf.cache.next]
	i := sort.Search(len(changes), func(i int) bool { return changes[i].Rev > inf.rev })
	pending := changes[i:]
	put(uint64(len(pending)))
	for _, c := range pending {
		w.hashChange(c, put, putS)
		head, ok := inf.server.store.peek(inf.kind, c.Key)
		if ok && head == c.Object {
			put(1)
		} else {
			put(0)
		}
	}
}

// hashBacklog adds the changes of a paused cache's kind that the cache has
// not applied, in order. An informer bound to the cache's apiserver
// receives each of them, one per delivery step, once the cache resumes:
// two paths that paused the cache at the same revision and reached the
// same head through different intermediate writes (a status write more,
// say) deliver different events and interleave the reconciles between
// them differently, so they must not merge while something may read the
// cache (a cache nothing will read is hashed as unread, hashPaused).
func (w *World) hashBacklog(c *WatchCache, put func(uint64), putS func(string)) {
	backlog := w.Store.table(c.kind).changes[c.next:]
	put(uint64(len(backlog)))
	for i := range backlog {
		w.hashChange(backlog[i], put, putS)
	}
}

// hashChange adds one change of the store: its key, its type and the
// content of the object it leaves.
func (w *World) hashChange(c *Change, put func(uint64), putS func(string)) {
	putS(c.Key)
	put(uint64(c.Type))
	if c.Object != nil {
		put(w.explorer.contentHash(c.Object))
		if w.explorer.hashRevisions {
			putS(c.Object.GetResourceVersion())
		}
	}
}

// contentHash hashes an object's content without its resourceVersion.
// Stored objects are immutable, so the hash is computed once per object.
func (x *explorerHooks) contentHash(obj client.Object) uint64 {
	if x.contentHashes == nil {
		x.contentHashes = map[client.Object]uint64{}
	}
	if h, ok := x.contentHashes[obj]; ok {
		return h
	}
	if h, ok := x.inherited[obj]; ok {
		return h
	}
	h := x.content.hash(obj)
	x.contentHashes[obj] = h
	return h
}

// knownHashes returns the content hashes this world knows of the objects
// a checkpoint of it holds (its store's objects, its apiservers' caches
// and its informers), for the worlds resumed from it; nil when it knows
// none (a world whose state was never fingerprinted).
func (w *World) knownHashes() map[client.Object]uint64 {
	x := &w.explorer
	if len(x.contentHashes) == 0 && len(x.inherited) == 0 {
		return nil
	}
	// The store's objects are most of them (caches and informers mostly
	// hold the same ones); contentHashes holds every object the world
	// ever hashed, far more.
	n := 0
	for _, t := range w.Store.tables {
		n += len(t.objects)
	}
	known := make(map[client.Object]uint64, n)
	add := func(objects map[string]client.Object) {
		for _, obj := range objects {
			if h, ok := x.contentHashes[obj]; ok {
				known[obj] = h
			} else if h, ok := x.inherited[obj]; ok {
				known[obj] = h
			}
		}
	}
	for _, t := range w.Store.tables {
		add(t.objects)
	}
	for _, srv := range w.Servers {
		for _, c := range srv.caches {
			add(c.objects)
		}
	}
	for _, h := range w.hosts {
		for _, inf := range h.informers {
			add(inf.objects)
		}
	}
	return known
}

// contentHasher computes the content hash of an object (contenthash.go:
// equal exactly when the JSON encodings are) with resourceVersion and
// managedFields left out. It does not deep-copy the object to blank those
// two fields: the object's struct is copied shallowly into a scratch value
// of its type (the two fields are set on the copy only, the rest is shared
// and only read).
type contentHasher struct {
	h        contentHash
	scratch  map[reflect.Type]reflect.Value // per object type, a *T to copy into
	computed int                            // objects hashed, for tests
}

func (c *contentHasher) hash(obj client.Object) uint64 {
	c.computed++
	if c.scratch == nil {
		c.scratch = map[reflect.Type]reflect.Value{}
	}
	var view client.Object
	v := reflect.ValueOf(obj)
	s, ok := c.scratch[v.Type()]
	if !ok {
		s = shallowScratch(v.Type())
		c.scratch[v.Type()] = s
	}
	if s.IsValid() && !v.IsNil() {
		s.Elem().Set(v.Elem())
		view = s.Interface().(client.Object)
	} else {
		view = copyObject(obj)
	}
	view.SetResourceVersion("")
	view.SetManagedFields(nil)
	c.h.sum = fnvOffset64
	vv := reflect.ValueOf(view)
	encoderOf(vv.Type())(&c.h, vv)
	return c.h.sum
}

// shallowScratch returns a new *T for a pointer-to-struct type t whose
// struct holds its metav1.ObjectMeta by value (typed API objects, CRD
// types): setting the resourceVersion and managedFields of a shallow copy
// then leaves the original alone. Other types (unstructured objects keep
// their metadata in a shared map) get the zero Value: deep-copy them.
func shallowScratch(t reflect.Type) reflect.Value {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	for i := 0; i < t.Elem().NumField(); i++ {
		if f := t.Elem().Field(i); f.Anonymous && f.Type == objectMetaType {
			return reflect.New(t.Elem())
		}
	}
	return reflect.Value{}
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// StoreHash fingerprints the store's contents alone (object content without
// resourceVersion, kind by kind): the ground truth a schedule ended in,
// whether or not a reconcile is in flight.
func (w *World) StoreHash() uint64 {
	f := newFingerprint()
	w.hashStore(f)
	return f.h.Sum64()
}

// fingerprint is the FNV-64a hash StateHash and StoreHash write into, with
// the two encodings they use: fixed-width integers and NUL-terminated
// strings.
type fingerprint struct {
	h   hash.Hash64
	buf [8]byte
}

func newFingerprint() *fingerprint { return &fingerprint{h: fnv.New64a()} }

func (f *fingerprint) put(v uint64) {
	binary.LittleEndian.PutUint64(f.buf[:], v)
	f.h.Write(f.buf[:])
}

func (f *fingerprint) putS(s string) {
	f.h.Write([]byte(s))
	f.h.Write([]byte{0})
}

// hashStore writes the store's contents, kind by kind in first-use order.
func (w *World) hashStore(f *fingerprint) {
	for _, k := range w.Store.kinds.ordered {
		if t := w.Store.tables[k]; t != nil {
			f.putS(k.gvk.Kind)
			w.hashObjects(f.h, nil, t.objects, f.put, f.putS)
		}
	}
}

// hashExternals adds the state of every actor that has one (Hasher: the
// external systems), in the world's actor order.
func (w *World) hashExternals(f *fingerprint) {
	for _, a := range w.actors {
		if s, ok := a.(Hasher); ok {
			f.putS(string(a.Name()))
			s.HashState(f.h)
		}
	}
}

// externalState is the external systems' state alone (hashExternals), for
// a memory digest at each external call.
func (w *World) externalState() uint64 {
	f := newFingerprint()
	w.hashExternals(f)
	return f.h.Sum64()
}
