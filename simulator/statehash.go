package simulator

import (
	"encoding/binary"
	"encoding/json"
	"hash"
	"hash/fnv"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Hasher is implemented by actors with state of their own (an external
// system's data), so that World.StateHash covers it.
type Hasher interface {
	HashState(h hash.Hash64)
}

// StateHash fingerprints everything that determines the world's future,
// for the exhaustive explorer's dedup: the store's contents (object content
// without resourceVersion, so that the same state reached through
// differently ordered writes matches), paused watch caches, each controller's
// apiserver, informer contents and queue, external systems' state, the
// workload's position, the fault budget, the phase and the clock. It returns
// false while a reconcile is in flight: a reconciler's local variables are
// not observable, so such states are never merged.
func (w *World) StateHash() (uint64, bool) {
	for _, h := range w.hosts {
		if h.run != nil {
			return 0, false
		}
	}
	hh := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		hh.Write(buf[:])
	}
	putS := func(s string) {
		hh.Write([]byte(s))
		hh.Write([]byte{0})
	}
	// The store, kind by kind in first-use order.
	for _, k := range w.Store.kinds.ordered {
		t := w.Store.tables[k]
		if t == nil {
			continue
		}
		putS(k.gvk.Kind)
		w.hashObjects(hh, t.objects, put, putS)
	}
	for _, p := range w.paused {
		put(uint64(p.server.ID))
		putS(p.cache.kind.gvk.Kind)
		w.hashObjects(hh, p.cache.objects, put, putS)
	}
	for _, h := range w.hosts {
		putS(string(h.actor))
		put(uint64(h.server.ID))
		for _, inf := range h.informers {
			putS(inf.kind.gvk.Kind)
			w.hashObjects(hh, inf.objects, put, putS)
			if inf.hasPending() {
				put(1)
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
	}
	for _, a := range w.actors {
		if s, ok := a.(Hasher); ok {
			putS(string(a.Name()))
			s.HashState(hh)
		}
	}
	put(uint64(w.workload))
	if w.waiting {
		put(uint64(w.waitDeadline - w.Clock.Now()))
	}
	put(uint64(w.budget.Crashes)<<48 | uint64(w.budget.Stale)<<32 | uint64(w.budget.Drops)<<16 | uint64(w.budget.Evictions))
	if w.settling {
		put(1)
	}
	put(uint64(w.Clock.Now()))
	return hh.Sum64(), true
}

// hashObjects adds a map of objects in key order.
func (w *World) hashObjects(hh hash.Hash64, objects map[string]client.Object, put func(uint64), putS func(string)) {
	keys := make([]string, 0, len(objects))
	for key := range objects {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	put(uint64(len(keys)))
	for _, key := range keys {
		putS(key)
		put(w.contentHash(objects[key]))
	}
}

// contentHash hashes an object's content without its resourceVersion.
// Stored objects are immutable, so the hash is computed once per object.
func (w *World) contentHash(obj client.Object) uint64 {
	if w.contentHashes == nil {
		w.contentHashes = map[client.Object]uint64{}
	}
	if h, ok := w.contentHashes[obj]; ok {
		return h
	}
	c := copyObject(obj)
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	data, err := json.Marshal(c)
	if err != nil {
		panic("simulator: hashing " + obj.GetName() + ": " + err.Error())
	}
	h := fnv.New64a()
	h.Write(data)
	w.contentHashes[obj] = h.Sum64()
	return w.contentHashes[obj]
}
