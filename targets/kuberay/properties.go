package kuberay

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// Properties are what a RayCluster user relies on.
func Properties() []properties.Property {
	return []properties.Property{
		NoExcessWorkers(),
		NoDeleteOfWantedPod(),
		properties.EventuallyConverges("RayClusterConverges", func(s *properties.State) (bool, string) {
			rc, _ := properties.Get[*rayv1.RayCluster](s, Namespace, ClusterName)
			return convergedOn(rc, properties.List[*corev1.Pod](s, Namespace, nil), properties.List[*corev1.Service](s, Namespace, nil))
		}),
		properties.NoStuckReconcile(3),
		properties.NoReconcilePanic(),
		properties.NoEndlessReconcile(),
	}
}

// workerLabels select the worker pods of group "small" of the cluster (the
// labels KubeRay puts on them).
func workerLabels() map[string]string {
	return map[string]string{utils.RayClusterLabelKey: ClusterName, utils.RayNodeGroupLabelKey: GroupName, utils.RayNodeTypeLabelKey: string(rayv1.WorkerNode)}
}

// isWorker: the pod carries every one of workerLabels, as the selector of
// workerLabels matches it (each label present with its value, none of the
// values empty), read in place: the workload's wait and the properties ask
// it of every pod after every change (TestIsWorkerIsTheSelector).
func isWorker(pod *corev1.Pod) bool {
	l := pod.Labels
	return l[utils.RayClusterLabelKey] == ClusterName && l[utils.RayNodeGroupLabelKey] == GroupName && l[utils.RayNodeTypeLabelKey] == string(rayv1.WorkerNode)
}

func isHead(pod *corev1.Pod) bool {
	return pod.Labels[utils.RayClusterLabelKey] == ClusterName && pod.Labels[utils.RayNodeTypeLabelKey] == string(rayv1.HeadNode)
}

// desiredWorkers is what the user asks of group "small": replicas clamped
// to [minReplicas, maxReplicas] (minReplicas when replicas is unset), none
// while the cluster or the group is suspended (a committed suspension
// included) or the cluster is being deleted. This is the RayCluster API's documented meaning, written here
// from the API reference, not taken from KubeRay's code.
func desiredWorkers(rc *rayv1.RayCluster) int {
	if suspendedOrGone(rc) {
		return 0
	}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		if g.GroupName != GroupName {
			continue
		}
		if g.Suspend != nil && *g.Suspend {
			return 0
		}
		lo, hi := int32(0), int32(MaxReplicas)
		if g.MinReplicas != nil {
			lo = *g.MinReplicas
		}
		if g.MaxReplicas != nil {
			hi = *g.MaxReplicas
		}
		n := lo
		if g.Replicas != nil {
			n = *g.Replicas
		}
		n = max(lo, min(n, hi))
		return int(n)
	}
	return 0
}

func workersToDelete(rc *rayv1.RayCluster) []string {
	if rc == nil {
		return nil
	}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		if g.GroupName == GroupName {
			return g.ScaleStrategy.WorkersToDelete
		}
	}
	return nil
}

func suspendedOrGone(rc *rayv1.RayCluster) bool {
	return rc == nil || rc.DeletionTimestamp != nil || (rc.Spec.Suspend != nil && *rc.Spec.Suspend) || suspensionCommitted(rc)
}

// suspensionCommitted: the RayCluster's status carries the Suspending
// condition, True. With status conditions (on by default in v1.5),
// suspension is atomic by design: once the operator has persisted
// Suspending, it deletes every pod and reaches Suspended even if the user
// has set spec.suspend back to false meanwhile, and only then brings the
// cluster back. A teardown after such a change of mind is the API's
// documented behaviour, not the deletion of a wanted pod (docs/bugs.md,
// KubeRay, 9).
func suspensionCommitted(rc *rayv1.RayCluster) bool {
	return meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterSuspending))
}

// liveWorkers are the worker pods of this instance of the cluster that are
// not being deleted.
func liveWorkers(s *properties.State, rc *rayv1.RayCluster) []*corev1.Pod {
	if rc == nil {
		return nil // no instance owns anything
	}
	var out []*corev1.Pod
	for _, p := range properties.List[*corev1.Pod](s, Namespace, labels.SelectorFromSet(workerLabels())) {
		if p.DeletionTimestamp == nil && properties.OwnedBy(p, rc) {
			out = append(out, p)
		}
	}
	return out
}

// reconcileWindow follows what the controller may have acted on in its
// current reconcile: the RayCluster versions its Gets returned (its
// informer may serve an old one) and every version committed since the
// reconcile began. A decision is judged against the most lenient of them,
// so neither a user's concurrent change nor a merely late informer is
// blamed on the controller; acting on a view older than everything it read
// is.
type reconcileWindow struct {
	versions []*rayv1.RayCluster
	revs     []model.Revision
	byRev    map[model.Revision]*rayv1.RayCluster
}

func (w *reconcileWindow) add(rc *rayv1.RayCluster, rev model.Revision) {
	w.versions = append(w.versions, rc)
	w.revs = append(w.revs, rev)
}

func (w *reconcileWindow) observe(s *properties.State, e *model.Event) {
	if w.byRev == nil {
		w.byRev = map[model.Revision]*rayv1.RayCluster{}
	}
	switch {
	case e.Op == model.OpReconcile && properties.IsController(e.Actor):
		rc, _ := properties.Get[*rayv1.RayCluster](s, Namespace, ClusterName)
		w.versions, w.revs = w.versions[:0], w.revs[:0]
		w.add(rc, s.Revision())
	case e.Change != model.ChangeNone && e.Kind == "RayCluster":
		rc, _ := e.Object.(*rayv1.RayCluster)
		if e.Change == model.ChangeDeleted {
			rc = nil
		} else {
			w.byRev[e.Rev] = rc
		}
		w.add(rc, e.Rev)
	case e.Op == model.OpGet && e.Kind == "RayCluster" && e.Err == "" && properties.IsController(e.Actor):
		if rc, ok := w.byRev[e.Rev]; ok {
			w.add(rc, e.Rev)
		}
	}
}

// hash fingerprints the window for state pruning: the revisions of the
// versions in it.
func (w *reconcileWindow) hash(h hash.Hash64) {
	var buf [8]byte
	for _, r := range w.revs {
		binary.LittleEndian.PutUint64(buf[:], uint64(r))
		h.Write(buf[:])
	}
}

// windowMonitor is the monitor of a property judged against the
// reconcile window: the window follows every event first, then check
// judges it; the window's versions are the monitor's state.
func windowMonitor(check func(s *properties.State, e *model.Event, win *reconcileWindow) *properties.Violation) func() properties.Monitor {
	return func() properties.Monitor { return &windowChecker{check: check} }
}

// windowChecker is a windowMonitor's monitor: a properties.StateHasher
// (the window's revisions) and a properties.Forker (a copy of the window).
type windowChecker struct {
	win   reconcileWindow
	check func(s *properties.State, e *model.Event, win *reconcileWindow) *properties.Violation
}

func (m *windowChecker) Observe(s *properties.State, e *model.Event) *properties.Violation {
	m.win.observe(s, e)
	return m.check(s, e, &m.win)
}

func (m *windowChecker) Finish(*properties.State, *model.History) *properties.Violation { return nil }

func (m *windowChecker) HashState(h hash.Hash64) { m.win.hash(h) }

// Fork copies the window: its slices grow in place and its map gains
// versions. The versions themselves are events' objects, never changed.
func (m *windowChecker) Fork() properties.Monitor {
	c := *m
	c.win.versions, c.win.revs, c.win.byRev = slices.Clone(m.win.versions), slices.Clone(m.win.revs), maps.Clone(m.win.byRev)
	return &c
}

// NoExcessWorkers is the safety property "KubeRay never creates a worker
// pod beyond maxReplicas, nor one more than the replicas the user asks
// for" (a duplicate pod for one wanted replica, which KubeRay's scale
// expectations exist to prevent when its informer is behind). It is judged
// at each worker pod the controller creates: the live workers of the
// cluster, with the new one, must be at most maxReplicas and at most the
// largest desired count of any RayCluster version the reconcile read or
// that was committed since it began.
func NoExcessWorkers() properties.Property {
	return properties.Property{
		Name:      "NoExcessWorkers",
		Statement: "the controller never creates a worker pod beyond maxReplicas or beyond the replicas the user asks for",
		Kind:      properties.Safety,
		NewMonitor: windowMonitor(func(s *properties.State, e *model.Event, win *reconcileWindow) *properties.Violation {
			if e.Op != model.OpCreate || e.Change != model.ChangeAdded || !properties.IsController(e.Actor) {
				return nil
			}
			pod, ok := e.Object.(*corev1.Pod)
			if !ok || !isWorker(pod) {
				return nil
			}
			rc, _ := properties.Get[*rayv1.RayCluster](s, Namespace, ClusterName)
			live := len(liveWorkers(s, rc)) + 1
			bound, why := 0, ""
			for _, v := range win.versions {
				if d := desiredWorkers(v); d > bound {
					bound = d
				}
			}
			switch {
			case live > MaxReplicas:
				why = fmt.Sprintf("maxReplicas is %d", MaxReplicas)
			case live > bound:
				why = fmt.Sprintf("the most any RayCluster version this reconcile read, or committed since it began, asks for is %d", bound)
			default:
				return nil
			}
			return &properties.Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("the controller created worker pod %s, making %d live workers in group %s; %s.\nLive workers before it: %s.",
				pod.Name, live, GroupName, why, podNames(liveWorkers(s, rc)))}
		}),
	}
}

// NoDeleteOfWantedPod is the safety property "KubeRay never deletes a pod
// the user still wants": a worker pod that is not in workersToDelete, while
// the group has no more live workers than it asks for, or the head pod
// while the cluster runs; a failed or succeeded pod may always go. Judged at
// each delete by the controller that starts a pod's deletion, against every
// RayCluster version the reconcile read or that was committed since it
// began.
func NoDeleteOfWantedPod() properties.Property {
	return properties.Property{
		Name:      "NoDeleteOfWantedPod",
		Statement: "the controller never deletes a healthy head pod of a running cluster, nor a healthy worker pod not in workersToDelete while the group has no more workers than it asks for",
		Kind:      properties.Safety,
		NewMonitor: windowMonitor(func(s *properties.State, e *model.Event, win *reconcileWindow) *properties.Violation {
			if e.Op != model.OpDelete || e.Change == model.ChangeNone || e.Kind != "Pod" || !properties.IsController(e.Actor) {
				return nil
			}
			pod, ok := properties.Get[*corev1.Pod](s, e.Namespace, e.Name)
			if !ok || pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
				return nil
			}
			rc, ok := properties.Get[*rayv1.RayCluster](s, Namespace, ClusterName)
			if !ok || !properties.OwnedBy(pod, rc) {
				return nil
			}
			for _, v := range win.versions {
				if suspendedOrGone(v) {
					return nil
				}
			}
			if isHead(pod) {
				return &properties.Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("the controller deleted head pod %s (phase %s) of a running cluster.", pod.Name, pod.Status.Phase)}
			}
			if !isWorker(pod) {
				return nil
			}
			least := -1
			for _, v := range win.versions {
				if slices.Contains(workersToDelete(v), pod.Name) {
					return nil
				}
				if d := desiredWorkers(v); least < 0 || d < least {
					least = d
				}
			}
			live := liveWorkers(s, rc)
			if len(live) > least {
				return nil
			}
			return &properties.Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("the controller deleted worker pod %s (phase %s), which is not in workersToDelete, while group %s had %d live workers and the cluster asked for %d.\nLive workers: %s.",
				pod.Name, pod.Status.Phase, GroupName, len(live), least, podNames(live))}
		}),
	}
}

func podNames(pods []*corev1.Pod) string {
	if len(pods) == 0 {
		return "none"
	}
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// converged reads ground truth through a client.Reader (a workload's wait)
// and decides as convergedOn does, without the explanation: the wait asks
// it after every change of a pod, and only its answer counts. It reads
// the stored objects themselves where the reader allows (SharedGet,
// SharedList): it only reads them.
func converged(ctx context.Context, r client.Reader) bool {
	rc, err := simulator.SharedGet[*rayv1.RayCluster](ctx, r, client.ObjectKey{Namespace: Namespace, Name: ClusterName})
	if err != nil {
		rc = nil
	}
	pods, err := simulator.SharedList[*corev1.Pod](ctx, r, &corev1.PodList{}, client.InNamespace(Namespace))
	if err != nil {
		return false
	}
	svcs, err := simulator.SharedList[*corev1.Service](ctx, r, &corev1.ServiceList{}, client.InNamespace(Namespace))
	if err != nil {
		return false
	}
	ok, _ := convergence(rc, pods, svcs, false)
	return ok
}

// convergedOn: the cluster's pods are what its spec asks. No cluster, or a
// suspended one: no pods of it at all. A running cluster: one Running head
// pod and its head service, exactly the desired number of Running workers
// in group small, and no pod of it being deleted.
func convergedOn(rc *rayv1.RayCluster, pods []*corev1.Pod, svcs []*corev1.Service) (bool, string) {
	return convergence(rc, pods, svcs, true)
}

// convergence is convergedOn, with the explanation only when explain (the
// answer is the same either way: one decision, the strings built beside
// it).
func convergence(rc *rayv1.RayCluster, pods []*corev1.Pod, svcs []*corev1.Service, explain bool) (bool, string) {
	var headBuf, workerBuf, termBuf [8]*corev1.Pod
	heads, workers, terminating := headBuf[:0], workerBuf[:0], termBuf[:0]
	for _, p := range pods {
		if p.Labels[utils.RayClusterLabelKey] != ClusterName {
			continue
		}
		switch {
		case p.DeletionTimestamp != nil:
			terminating = append(terminating, p)
		case isHead(p):
			heads = append(heads, p)
		case isWorker(p):
			workers = append(workers, p)
		}
	}
	if suspendedOrGone(rc) {
		if n := len(heads) + len(workers) + len(terminating); n > 0 {
			if !explain {
				return false, ""
			}
			return false, fmt.Sprintf("the cluster is suspended or gone but %d of its pods remain (heads %s; workers %s; terminating %s)", n, podNames(heads), podNames(workers), podNames(terminating))
		}
		return true, "no pods"
	}
	if len(heads) != 1 || heads[0].Status.Phase != corev1.PodRunning || !properties.OwnedBy(heads[0], rc) {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("want one Running head pod of this cluster, have %s", describePods(heads))
	}
	headSvc := false
	for _, s := range svcs {
		if s.Labels[utils.RayClusterLabelKey] == ClusterName && s.Labels[utils.RayNodeTypeLabelKey] == string(rayv1.HeadNode) && properties.OwnedBy(s, rc) {
			headSvc = true
		}
	}
	if !headSvc {
		return false, "the head service is missing"
	}
	want := desiredWorkers(rc)
	running := 0
	for _, p := range workers {
		if p.Status.Phase == corev1.PodRunning && properties.OwnedBy(p, rc) {
			running++
		}
	}
	if running != want || len(workers) != want {
		if !explain {
			return false, ""
		}
		return false, fmt.Sprintf("want %d Running workers in group %s, have %s", want, GroupName, describePods(workers))
	}
	if len(terminating) > 0 {
		if !explain {
			return false, ""
		}
		return false, "pods still terminating: " + podNames(terminating)
	}
	if !explain {
		return true, ""
	}
	return true, fmt.Sprintf("head and %d workers running", want)
}

func describePods(pods []*corev1.Pod) string {
	if len(pods) == 0 {
		return "none"
	}
	parts := make([]string, len(pods))
	for i, p := range pods {
		parts[i] = p.Name + " (" + string(p.Status.Phase) + ")"
	}
	return strings.Join(parts, ", ")
}
