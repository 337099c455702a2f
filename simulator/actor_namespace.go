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
}

// NewNamespaceController returns the built-in namespace controller.
func NewNamespaceController() Actor { return &NamespaceController{} }

// Name implements Actor.
func (c *NamespaceController) Name() model.Actor { return model.ActorNamespace }

// Steps implements Actor.
func (c *NamespaceController) Steps(w *World, buf []Step) []Step {
	if out, ok := c.memo.lookup(w, buf); ok {
		return out
	}
	from := len(buf)
	nsKind, err := w.Store.kinds.forObject(protoNamespace)
	if err != nil {
		return buf
	}
	for _, o := range storedList(w, nsKind, "") {
		ns := o.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, namespaceFinalizer) {
			continue
		}
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
	c.memo.save(w, buf, from)
	return buf
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
