package simulator

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/opcheck/opcheck/model"
)

// PVCProtection is the pvc-protection controller: a claim being deleted
// keeps its kubernetes.io/pvc-protection finalizer while a pod of its
// namespace uses it: mounts it, is bound to a node (spec.nodeName set) and
// has not terminated (phase not Succeeded or Failed); a pod being deleted
// uses it until it is gone. A pod never scheduled does not: no kubelet
// mounts the claim for it, and the scheduler will not bind it to a
// terminating claim. Then one step removes the finalizer.
type PVCProtection struct {
	memo stepMemo
}

// NewPVCProtection returns the built-in pvc-protection controller.
func NewPVCProtection() Actor { return &PVCProtection{} }

// Name implements Actor.
func (c *PVCProtection) Name() model.Actor { return model.ActorPVCProtection }

// Steps implements Actor.
func (c *PVCProtection) Steps(w *World, buf []Step) []Step {
	podKind, claimKind := w.podKind(), w.claimKind()
	key := tablesKey(w, nil, podKind, claimKind, nil)
	if out, ok := c.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	for _, o := range storedList(w, claimKind, "") {
		pvc := o.(*corev1.PersistentVolumeClaim)
		if !beingDeleted(pvc) || !slices.Contains(pvc.Finalizers, FinalizerPVCProtection) {
			continue
		}
		if claimInUse(w, podKind, pvc) {
			continue
		}
		buf = append(buf, releaseClaimStep(w, pvc))
	}
	c.memo.save(key, buf, from)
	return buf
}

func removeFinalizer(fs []string, f string) []string {
	out := make([]string, 0, len(fs))
	for _, x := range fs {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// claimInUse: some pod of the claim's namespace mounts it, is bound to a
// node and has not terminated.
func claimInUse(w *World, podKind *kindInfo, pvc *corev1.PersistentVolumeClaim) bool {
	for _, o := range storedList(w, podKind, pvc.Namespace) {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName == "" || podTerminated(p) {
			continue
		}
		for i := range p.Spec.Volumes {
			if src := p.Spec.Volumes[i].PersistentVolumeClaim; src != nil && src.ClaimName == pvc.Name {
				return true
			}
		}
	}
	return false
}

func releaseClaimStep(w *World, pvc *corev1.PersistentVolumeClaim) Step {
	return Step{Actor: model.ActorPVCProtection, Label: "release pvc " + nsKey(pvc.Namespace, pvc.Name), Run: func() {
		np := pvc.DeepCopy()
		np.Finalizers = removeFinalizer(np.Finalizers, FinalizerPVCProtection)
		_ = w.ActorClient(model.ActorPVCProtection).Update(context.Background(), np)
	}}
}
