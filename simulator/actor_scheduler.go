package simulator

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opcheck/opcheck/model"
)

// NodeName is the one node of the simulated cluster: the scheduler binds
// every pod to it.
const NodeName = "opcheck-node"

// Scheduler is the kube-scheduler: it binds a pending pod to the node (sets
// spec.nodeName) once every claim the pod mounts exists and is not being
// deleted, as the volume-binding plugin requires; until then the pod stays
// Pending and unscheduled. One step per pod. Nodes, resources, affinity and
// taints are not modelled: the one node fits every pod. Its steps and
// writes are recorded under the kubelet's actor name (the node's side of
// the cluster, one lane in traces), labelled "bind pod".
type Scheduler struct {
	memo stepMemo
}

// NewScheduler returns the built-in scheduler.
func NewScheduler() Actor { return &Scheduler{} }

// Name implements Actor.
func (s *Scheduler) Name() model.Actor { return model.ActorKubelet }

// Steps implements Actor.
func (s *Scheduler) Steps(w *World, buf []Step) []Step {
	podKind, claimKind := w.podKind(), w.claimKind()
	key := tablesKey(w, nil, podKind, claimKind, nil)
	if out, ok := s.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	for _, o := range storedList(w, podKind, "") {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName != "" || beingDeleted(p) || !podPending(p) || !podClaimsUsable(w, claimKind, p) {
			continue
		}
		buf = append(buf, bindStep(w, p))
	}
	s.memo.save(key, buf, from)
	return buf
}

// bindStep creates the pod's Binding to the node, as the scheduler does:
// the apiserver sets spec.nodeName (a pod's spec is otherwise immutable).
// Recorded as a Create of the Pod with Detail "Binding".
func bindStep(w *World, p *corev1.Pod) Step {
	ns, name, uid := p.Namespace, p.Name, p.UID
	return Step{Actor: model.ActorKubelet, Label: "bind pod " + nsKey(ns, name), Run: func() {
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}, Target: corev1.ObjectReference{Kind: "Node", Name: NodeName}}
		_ = w.ActorClient(model.ActorKubelet).Create(context.Background(), b)
	}}
}
