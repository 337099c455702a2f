package simulator

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// GarbageCollector is the garbage collector: it deletes dependents whose
// owners are all gone (background) or waiting for their dependents
// (foreground deletion), removes owner references to owners being deleted
// with the orphan policy, and removes the foregroundDeletion and orphan
// finalizers from owners once their dependents are dealt with. An owner
// reference resolves when an object of the referenced kind, name and UID
// exists (in the dependent's namespace for namespaced owners). Per object at
// most one step is enabled.
type GarbageCollector struct {
	memo stepMemo
	// kinds caches owner-reference kind resolution for one store.
	kinds      map[ownerKindKey]*kindInfo
	kindsStore *Store
	// tables holds what the collector reads of each table of that store,
	// per table version (gcTable).
	tables map[*kindData]*gcTable
	// views and drop are scratch: the tables of one Steps, the UIDs of
	// references a step removes.
	views []*gcTable
	drop  []types.UID
}

// gcTable is what the collector looks at in one table at one version (the
// number of changes it has had, as in sortedTables): the objects that have
// owner references or are being deleted, in key order (no other object can
// have a step), each reference resolved to its owner's kind and key, and
// whether some object waits for its dependents (a deletion in the
// foreground or with the orphan policy). A write changes one table; the
// others' are reused.
type gcTable struct {
	kind    *kindInfo
	version int
	objs    []client.Object
	keys    []string    // per object of objs, its key in the table
	owners  [][]gcOwner // per object of objs, per owner reference
	waiting bool
	// spare is the previous version's storage, reused by the next
	// rebuild: nothing outside one Steps keeps objs, keys or owners (a
	// step keeps its object and an owners entry, and an entry is never
	// modified once built).
	spare struct {
		objs   []client.Object
		keys   []string
		owners [][]gcOwner
	}
}

// gcOwner is where an owner reference's owner would be stored: kind nil
// when unresolvable (an unknown kind, or a cluster-scoped dependent naming a
// namespaced owner).
type gcOwner struct {
	kind *kindInfo
	key  string
}

type ownerKindKey struct{ apiVersion, kind string }

// Bits of the reverse owner index.
const (
	gcReferenced uint8 = 1 << iota // some object references the UID
	gcBlocking                     // ... with blockOwnerDeletion true
)

// NewGarbageCollector returns the built-in garbage collector.
func NewGarbageCollector() Actor { return &GarbageCollector{} }

// Name implements Actor.
func (g *GarbageCollector) Name() model.Actor { return model.ActorGC }

// ownerKind resolves the kind an owner reference names (nil when the
// scheme does not know it: such a reference is unresolvable and left
// alone).
func (g *GarbageCollector) ownerKind(w *World, ref *metav1.OwnerReference) *kindInfo {
	g.useStore(w.Store)
	key := ownerKindKey{ref.APIVersion, ref.Kind}
	if k, ok := g.kinds[key]; ok {
		return k
	}
	var k *kindInfo
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
		k, _ = w.Store.kinds.forGVK(gv.WithKind(ref.Kind))
	}
	g.kinds[key] = k
	return k
}

// useStore starts the caches over for another store.
func (g *GarbageCollector) useStore(s *Store) {
	if g.kindsStore != s || g.kinds == nil {
		g.kinds, g.kindsStore, g.tables = map[ownerKindKey]*kindInfo{}, s, map[*kindData]*gcTable{}
	}
}

// table returns the collector's view of t at its current version.
func (g *GarbageCollector) table(w *World, t *kindData) *gcTable {
	g.useStore(w.Store)
	gt := g.tables[t]
	if gt == nil {
		gt = &gcTable{kind: t.info, version: -1}
		g.tables[t] = gt
	}
	if gt.version == len(t.changes) {
		return gt
	}
	// An object whose revision is the one the previous version held has
	// the same owner references: its resolved owners are reused (both
	// lists are in key order, so one walk pairs them). The rest is
	// resolved afresh.
	st := w.lists.of(t)
	prevObjs, prevKeys, prevOwners := gt.objs, gt.keys, gt.owners
	objs, keys, owners := gt.spare.objs[:0], gt.spare.keys[:0], gt.spare.owners[:0]
	gt.waiting = false
	k := t.info
	j := 0
	for i, obj := range st.objs {
		deleting := beingDeleted(obj)
		if deleting && (slices.Contains(obj.GetFinalizers(), FinalizerForeground) || slices.Contains(obj.GetFinalizers(), FinalizerOrphan)) {
			gt.waiting = true
		}
		refs := obj.GetOwnerReferences()
		if len(refs) == 0 && !deleting {
			continue
		}
		key := st.keys[i]
		for j < len(prevKeys) && prevKeys[j] < key {
			j++
		}
		var resolved []gcOwner
		if j < len(prevKeys) && prevObjs[j] == obj {
			resolved = prevOwners[j]
		} else {
			resolved = make([]gcOwner, len(refs))
			for r := range refs {
				ok := g.ownerKind(w, &refs[r])
				if ok == nil || (ok.namespaced && !k.namespaced) {
					continue
				}
				resolved[r] = gcOwner{ok, objectKey(ok, obj.GetNamespace(), refs[r].Name)}
			}
		}
		objs, keys, owners = append(objs, obj), append(keys, key), append(owners, resolved)
	}
	clear(prevObjs)
	clear(prevOwners)
	gt.spare.objs, gt.spare.keys, gt.spare.owners = prevObjs[:0], prevKeys[:0], prevOwners[:0]
	gt.version, gt.objs, gt.keys, gt.owners = len(t.changes), objs, keys, owners
	return gt
}

// Steps implements Actor.
func (g *GarbageCollector) Steps(w *World, buf []Step) []Step {
	// The collector reads every kind, and not the clock.
	key := revisionKey(w.Store)
	if out, ok := g.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	g.views = g.views[:0]
	waiting := false
	for _, k := range w.Store.kinds.ordered {
		if t := w.Store.tables[k]; t != nil && len(t.objects) > 0 {
			gt := g.table(w, t)
			g.views = append(g.views, gt)
			waiting = waiting || gt.waiting
		}
	}
	// The reverse index (who is referenced) is only needed when some owner
	// waits on its dependents; building it does not depend on order.
	var index map[types.UID]uint8
	if waiting {
		index = map[types.UID]uint8{}
		for _, gt := range g.views {
			for _, obj := range gt.objs {
				refs := obj.GetOwnerReferences()
				for i := range refs {
					bits := gcReferenced
					if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
						bits |= gcBlocking
					}
					index[refs[i].UID] |= bits
				}
			}
		}
	}
	for _, gt := range g.views {
		for i, obj := range gt.objs {
			if st, ok := g.dependentStep(w, gt, i); ok {
				buf = append(buf, st)
				continue
			}
			if index != nil && beingDeleted(obj) {
				if st, ok := g.ownerStep(w, gt.kind, obj, index); ok {
					buf = append(buf, st)
				}
			}
		}
	}
	g.memo.save(key, buf, from)
	return buf
}

// refState classifies an owner reference of a dependent.
type refState uint8

const (
	refSolid     refState = iota // owner exists and is not going away (or the ref is unresolvable)
	refDangling                  // no owner of that kind, name and UID
	refWaiting                   // owner is being deleted in the foreground
	refOrphaning                 // owner is being deleted with the orphan policy
)

func (g *GarbageCollector) classify(w *World, at gcOwner, ref *metav1.OwnerReference) refState {
	if at.kind == nil {
		// Unresolvable (unknown kind, or a cluster-scoped dependent naming
		// a namespaced owner): the real collector leaves it alone too.
		return refSolid
	}
	var owner client.Object
	exists := false
	if t := w.Store.tables[at.kind]; t != nil {
		owner, exists = t.objects[at.key]
	}
	if !exists || owner.GetUID() != ref.UID {
		return refDangling
	}
	if !beingDeleted(owner) {
		return refSolid
	}
	fs := owner.GetFinalizers()
	switch {
	case slices.Contains(fs, FinalizerOrphan):
		return refOrphaning
	case slices.Contains(fs, FinalizerForeground):
		return refWaiting
	}
	return refSolid
}

// dependentStep is what the collector does to gt's object i as a
// dependent.
func (g *GarbageCollector) dependentStep(w *World, gt *gcTable, i int) (Step, bool) {
	obj, owners, k := gt.objs[i], gt.owners[i], gt.kind
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return Step{}, false
	}
	var solid, dangling, waiting, orphaning int
	for i := range refs {
		switch g.classify(w, owners[i], &refs[i]) {
		case refSolid:
			solid++
		case refDangling:
			dangling++
		case refWaiting:
			waiting++
		case refOrphaning:
			orphaning++
		}
	}
	if solid > 0 && orphaning == 0 && dangling+waiting == 0 {
		return Step{}, false // the common case: every owner is there
	}
	key := objectKey(k, obj.GetNamespace(), obj.GetName())
	switch {
	case orphaning > 0:
		return g.dropRefsStep(w, k, obj, owners, "orphan ", key, func(s refState) bool { return s == refOrphaning }), true
	case solid > 0:
		if dangling+waiting == 0 {
			return Step{}, false
		}
		// A live owner keeps the dependent; references to owners that are
		// gone or waiting for their dependents are removed.
		return g.dropRefsStep(w, k, obj, owners, "drop owner refs ", key, func(s refState) bool { return s == refDangling || s == refWaiting }), true
	case beingDeleted(obj):
		return Step{}, false
	case waiting > 0:
		return g.deleteStep(w, k, obj, "delete foreground ", key, metav1.DeletePropagationForeground), true
	default:
		return g.deleteStep(w, k, obj, "delete ", key, metav1.DeletePropagationBackground), true
	}
}

func (g *GarbageCollector) deleteStep(w *World, k *kindInfo, obj client.Object, what, key string, policy metav1.DeletionPropagation) Step {
	ns, name, uid := obj.GetNamespace(), obj.GetName(), obj.GetUID()
	return Step{Actor: model.ActorGC, Label: what + k.gvk.Kind + " " + key, Run: func() {
		target := k.newObject()
		target.SetNamespace(ns)
		target.SetName(name)
		_ = w.ActorClient(model.ActorGC).Delete(context.Background(), target, client.PropagationPolicy(policy), client.Preconditions{UID: &uid})
	}}
}

// dropRefsStep removes the owner references whose state matches drop.
func (g *GarbageCollector) dropRefsStep(w *World, k *kindInfo, obj client.Object, owners []gcOwner, what, key string, drop func(refState) bool) Step {
	g.drop = g.drop[:0]
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if drop(g.classify(w, owners[i], &refs[i])) {
			g.drop = append(g.drop, refs[i].UID)
		}
	}
	uids := append([]types.UID(nil), g.drop...)
	return Step{Actor: model.ActorGC, Label: what + k.gvk.Kind + " " + key, Run: func() {
		nobj := obj.DeepCopyObject().(client.Object)
		old := nobj.GetOwnerReferences()
		kept := make([]metav1.OwnerReference, 0, len(old))
		for _, r := range old {
			removed := false
			for _, u := range uids {
				if r.UID == u {
					removed = true
					break
				}
			}
			if !removed {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		nobj.SetOwnerReferences(kept)
		_ = w.ActorClient(model.ActorGC).Update(context.Background(), nobj)
	}}
}

// ownerStep removes the foregroundDeletion finalizer of an owner once no
// dependent blocks it (blockOwnerDeletion), or the orphan finalizer once no
// dependent references it.
func (g *GarbageCollector) ownerStep(w *World, k *kindInfo, obj client.Object, index map[types.UID]uint8) (Step, bool) {
	fs := obj.GetFinalizers()
	bits := index[obj.GetUID()]
	var fin string
	switch {
	case slices.Contains(fs, FinalizerOrphan) && bits&gcReferenced == 0:
		fin = FinalizerOrphan
	case slices.Contains(fs, FinalizerForeground) && bits&gcBlocking == 0:
		fin = FinalizerForeground
	default:
		return Step{}, false
	}
	key := objectKey(k, obj.GetNamespace(), obj.GetName())
	return Step{Actor: model.ActorGC, Label: "finalize " + fin + " " + k.gvk.Kind + " " + key, Run: func() {
		nobj := obj.DeepCopyObject().(client.Object)
		nobj.SetFinalizers(removeFinalizer(nobj.GetFinalizers(), fin))
		_ = w.ActorClient(model.ActorGC).Update(context.Background(), nobj)
	}}, true
}
