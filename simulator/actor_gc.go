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
	// drop is scratch for the UIDs of references a step removes.
	drop []types.UID
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
	if g.kindsStore != w.Store || g.kinds == nil {
		g.kinds, g.kindsStore = map[ownerKindKey]*kindInfo{}, w.Store
	}
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

// Steps implements Actor.
func (g *GarbageCollector) Steps(w *World, buf []Step) []Step {
	if out, ok := g.memo.lookup(w, buf); ok {
		return out
	}
	from := len(buf)
	// The reverse index (who is referenced) is only needed when some owner
	// waits on its dependents; building it does not depend on map order.
	var index map[types.UID]uint8
	for _, t := range w.Store.tables {
		for _, obj := range t.objects {
			if beingDeleted(obj) && (slices.Contains(obj.GetFinalizers(), FinalizerForeground) || slices.Contains(obj.GetFinalizers(), FinalizerOrphan)) {
				index = map[types.UID]uint8{}
				break
			}
		}
		if index != nil {
			break
		}
	}
	if index != nil {
		for _, t := range w.Store.tables {
			for _, obj := range t.objects {
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
	kinds := w.Store.kinds.ordered
	for _, k := range kinds {
		for _, obj := range storedList(w, k, "") {
			if st, ok := g.dependentStep(w, k, obj); ok {
				buf = append(buf, st)
				continue
			}
			if index != nil && beingDeleted(obj) {
				if st, ok := g.ownerStep(w, k, obj, index); ok {
					buf = append(buf, st)
				}
			}
		}
	}
	g.memo.save(w, buf, from)
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

func (g *GarbageCollector) classify(w *World, k *kindInfo, dep client.Object, ref *metav1.OwnerReference) refState {
	ok := g.ownerKind(w, ref)
	if ok == nil || (ok.namespaced && !k.namespaced) {
		// Unresolvable (unknown kind, or a cluster-scoped dependent naming
		// a namespaced owner): the real collector leaves it alone too.
		return refSolid
	}
	owner, exists := storedGet(w, ok, dep.GetNamespace(), ref.Name)
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

// dependentStep is what the collector does to obj as a dependent.
func (g *GarbageCollector) dependentStep(w *World, k *kindInfo, obj client.Object) (Step, bool) {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return Step{}, false
	}
	var solid, dangling, waiting, orphaning int
	for i := range refs {
		switch g.classify(w, k, obj, &refs[i]) {
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
	key := objectKey(k, obj.GetNamespace(), obj.GetName())
	switch {
	case orphaning > 0:
		return g.dropRefsStep(w, k, obj, "orphan ", key, func(s refState) bool { return s == refOrphaning }), true
	case solid > 0:
		if dangling+waiting == 0 {
			return Step{}, false
		}
		// A live owner keeps the dependent; references to owners that are
		// gone or waiting for their dependents are removed.
		return g.dropRefsStep(w, k, obj, "drop owner refs ", key, func(s refState) bool { return s == refDangling || s == refWaiting }), true
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
func (g *GarbageCollector) dropRefsStep(w *World, k *kindInfo, obj client.Object, what, key string, drop func(refState) bool) Step {
	g.drop = g.drop[:0]
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if drop(g.classify(w, k, obj, &refs[i])) {
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
