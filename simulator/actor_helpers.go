package simulator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The helpers the built-in actors (actor_*.go) share: the memo of their
// enabled steps, unrecorded reads of the store's own objects, and the pod
// predicates they judge pods by.

// stepMemo remembers the steps an actor computed at one revision of one
// world's store and one logical time. The built-in actors read nothing but
// the store (and the kubelet the clock), so their enabled steps only change
// when the store's revision does; most scheduling points (reads,
// deliveries, clock ticks) then cost one comparison.
type stepMemo struct{ revisionMemo[[]Step] }

// lookup appends the remembered steps to buf, if they are still valid.
func (m *stepMemo) lookup(w *World, buf []Step) ([]Step, bool) {
	if steps, ok := m.get(clockedKey(w.Store, w.Clock)); ok {
		return append(buf, steps...), true
	}
	return buf, false
}

// save remembers the steps appended to buf from index from on.
func (m *stepMemo) save(w *World, buf []Step, from int) {
	m.set(clockedKey(w.Store, w.Clock), append(m.last()[:0], buf[from:]...))
}

// storedList returns the stored objects of kind k in key order (the store's
// own objects: read only). Namespace "" means all namespaces.
func storedList(w *World, k *kindInfo, namespace string) []client.Object {
	t := w.Store.tables[k]
	if t == nil || len(t.objects) == 0 {
		return nil
	}
	return selectSorted(t.objects, &ListOptions{Namespace: namespace})
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
