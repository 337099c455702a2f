package simulator

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// NamespaceController is the namespace controller of the
// kube-controller-manager: for a Namespace being deleted it deletes every
// object in it, one step per object (an object that is already being
// deleted is waited for), and once nothing is left finalizes the
// namespace.
type NamespaceController struct {
	memo stepMemo
	wide bool // the memo's steps read every kind: a namespace was terminating
}

// NewNamespaceController returns the built-in namespace controller.
func NewNamespaceController() Actor { return &NamespaceController{} }

// Name implements Actor.
func (c *NamespaceController) Name() model.Actor { return model.ActorNamespace }

// Steps implements Actor.
func (c *NamespaceController) Steps(w *World, buf []Step) []Step {
	if !w.kinds.nsTried {
		w.kinds.nsTried = true
		w.kinds.ns, _ = w.Store.kinds.forObject(protoNamespace)
	}
	nsKind := w.kinds.ns
	if nsKind == nil {
		return buf
	}
	key := c.key(w, nsKind)
	if out, ok := c.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	c.wide = false
	for _, o := range storedList(w, nsKind, "") {
		ns := o.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, namespaceFinalizer) {
			continue
		}
		c.wide = true
		empty := true
		for _, k := range w.Store.kinds.ordered {
			if !k.namespaced {
				continue
			}
			for _, obj := range storedList(w, k, ns.Name) {
				empty = false
				if obj.GetDeletionTimestamp() == nil {
					buf = append(buf, deleteContentStep(w, k, obj))
				}
			}
		}
		if empty {
			buf = append(buf, finalizeNamespaceStep(w, ns.Name))
		}
	}
	c.memo.save(c.key(w, nsKind), buf, from)
	return buf
}

// key is the memo key of the steps: while no namespace is terminating
// they depend on the namespaces alone; while one is, on every kind (its
// contents).
func (c *NamespaceController) key(w *World, nsKind *kindInfo) memoKey {
	if c.wide {
		return revisionKey(w.Store)
	}
	return tablesKey(w, nil, nsKind, nil, nil)
}

func deleteContentStep(w *World, k *kindInfo, obj client.Object) Step {
	ns, name := obj.GetNamespace(), obj.GetName()
	return Step{Actor: model.ActorNamespace, Label: "delete " + k.gvk.Kind + " " + nsKey(ns, name), Run: func() {
		_ = w.ActorClient(model.ActorNamespace).delete(k, ns, name, &client.DeleteOptions{}, "namespace deletion", false)
	}}
}

func finalizeNamespaceStep(w *World, name string) Step {
	return Step{Actor: model.ActorNamespace, Label: "finalize namespace " + name, Run: func() {
		w.ActorClient(model.ActorNamespace).finalizeNamespace(context.Background(), name)
	}}
}
