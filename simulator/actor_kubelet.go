package simulator

import (
	"context"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// Kubelet is the node's kubelet: it starts pending pods bound to the node
// (spec.nodeName set by the Scheduler) whose claims are usable, makes
// running pods ready, and confirms the deletion of a terminating pod (a
// delete with grace period 0) once its grace period has passed on the
// logical clock (its deletionTimestamp); until then the pod is Terminating.
// Per pod at most one step is enabled, the next transition of its
// lifecycle.
type Kubelet struct {
	memo stepMemo
	// next is the earliest end of a grace period still to come, for
	// NextTimer; computed with the steps.
	next    model.Time
	hasNext bool
}

// NextTimer implements Timed: the clock may move to the end of the next
// grace period.
func (k *Kubelet) NextTimer() (model.Time, bool) { return k.next, k.hasNext }

// NewKubelet returns the built-in kubelet.
func NewKubelet() Actor { return &Kubelet{} }

// Name implements Actor.
func (k *Kubelet) Name() model.Actor { return model.ActorKubelet }

// Steps implements Actor.
func (k *Kubelet) Steps(w *World, buf []Step) []Step {
	podKind, claimKind := w.podKind(), w.claimKind()
	key := tablesKey(w, w.Clock, podKind, claimKind, nil)
	if out, ok := k.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	k.hasNext = false
	now := w.Clock.Now()
	for _, o := range storedList(w, podKind, "") {
		p := o.(*corev1.Pod)
		switch {
		case beingDeleted(p):
			// Containers stopped once the grace period is over: confirm
			// with grace period 0. A pod already confirmed waits for its
			// finalizers.
			if g := p.DeletionGracePeriodSeconds; g == nil || *g > 0 {
				if end := graceEnds(p); end > now {
					if !k.hasNext || end < k.next {
						k.next, k.hasNext = end, true
					}
				} else {
					buf = append(buf, kubeletConfirmStep(w, p))
				}
			}
		case p.Spec.NodeName == "":
			// Not bound to the node: not the kubelet's yet.
		case podPending(p):
			if podClaimsUsable(w, claimKind, p) {
				buf = append(buf, kubeletStartStep(w, p))
			}
		case p.Status.Phase == corev1.PodRunning && !podRunningAndReady(p):
			buf = append(buf, kubeletReadyStep(w, p))
		}
	}
	k.memo.save(key, buf, from)
	return buf
}

// podClaimsUsable: every claim the pod mounts exists and is not being
// deleted (the scheduler refuses a pod whose claim is missing or
// terminating, so it stays Pending).
func podClaimsUsable(w *World, claimKind *kindInfo, p *corev1.Pod) bool {
	for i := range p.Spec.Volumes {
		src := p.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		c, ok := storedGet(w, claimKind, p.Namespace, src.ClaimName)
		if !ok || beingDeleted(c) {
			return false
		}
	}
	return true
}

func kubeletConfirmStep(w *World, p *corev1.Pod) Step {
	ns, name, uid := p.Namespace, p.Name, p.UID
	return Step{Actor: model.ActorKubelet, Label: "confirm delete pod " + nsKey(ns, name), Run: func() {
		obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		_ = w.ActorClient(model.ActorKubelet).Delete(context.Background(), obj, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
	}}
}

// PodIP is the deterministic IP the kubelet gives a pod: a hash of its UID
// in 10.0.0.0/8.
func PodIP(uid string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	v := h.Sum32()
	b1, b2, b3 := (v>>16)&0xff, (v>>8)&0xff, v&0xff
	if b3 == 0 || b3 == 255 {
		b3 = 1 + b3%253
	}
	return "10." + strconv.Itoa(int(b1)) + "." + strconv.Itoa(int(b2)) + "." + strconv.Itoa(int(b3))
}

func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time) {
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == t {
			if c.Status != s {
				c.Status = s
				c.LastTransitionTime = now
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
}

func kubeletStartStep(w *World, p *corev1.Pod) Step {
	return Step{Actor: model.ActorKubelet, Label: "start pod " + nsKey(p.Namespace, p.Name), Run: func() {
		now := metav1.NewTime(w.Clock.Wall())
		np := podStatusRequest(p)
		np.Status.Phase = corev1.PodRunning
		setPodCondition(np, corev1.PodScheduled, corev1.ConditionTrue, now)
		setPodCondition(np, corev1.PodInitialized, corev1.ConditionTrue, now)
		setPodCondition(np, corev1.ContainersReady, corev1.ConditionFalse, now)
		setPodCondition(np, corev1.PodReady, corev1.ConditionFalse, now)
		ip := PodIP(string(p.UID))
		np.Status.PodIP = ip
		np.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		np.Status.StartTime = &now
		started := true
		np.Status.ContainerStatuses = make([]corev1.ContainerStatus, len(np.Spec.Containers))
		for i := range np.Spec.Containers {
			c := &np.Spec.Containers[i]
			np.Status.ContainerStatuses[i] = corev1.ContainerStatus{
				Name:        c.Name,
				Image:       c.Image,
				ContainerID: "opcheck://" + string(p.UID) + "/" + c.Name,
				Started:     &started,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}
		}
		_ = w.ActorClient(model.ActorKubelet).Status().Update(context.Background(), np)
	}}
}

func kubeletReadyStep(w *World, p *corev1.Pod) Step {
	return Step{Actor: model.ActorKubelet, Label: "ready pod " + nsKey(p.Namespace, p.Name), Run: func() {
		now := metav1.NewTime(w.Clock.Wall())
		np := podStatusRequest(p)
		setPodCondition(np, corev1.ContainersReady, corev1.ConditionTrue, now)
		setPodCondition(np, corev1.PodReady, corev1.ConditionTrue, now)
		for i := range np.Status.ContainerStatuses {
			np.Status.ContainerStatuses[i].Ready = true
		}
		_ = w.ActorClient(model.ActorKubelet).Status().Update(context.Background(), np)
	}}
}
