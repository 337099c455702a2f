package properties

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

// memberPVC is the zookeeper-style NoDeleteOfLive: a PVC data-zk-<i> is
// live while i < the CR's committed replicas.
func memberPVC() Property {
	return NoDeleteOfLive("NoDeleteOfLive(member PVC)",
		func(obj runtime.Object) bool {
			p, ok := obj.(*corev1.PersistentVolumeClaim)
			return ok && p.Labels["app"] == "zk"
		},
		func(s *State, obj runtime.Object) (bool, string) {
			p := obj.(*corev1.PersistentVolumeClaim)
			n, ok := crReplicas(s, "zk")
			if !ok {
				return false, ""
			}
			i, err := strconv.Atoi(p.Name[strings.LastIndex(p.Name, "-")+1:])
			if err != nil || i >= n {
				return false, ""
			}
			return true, fmt.Sprintf("ordinal %d < committed spec.replicas=%d", i, n)
		})
}

var app = map[string]string{"app": "zk"}

// zkBase: CR at 1 replica (rev 1), PVC 0 (rev 2), then scaled to 2 (rev 3),
// PVC 1 created (rev 4).
func zkBase() *builder {
	b := &builder{}
	b.create(model.ActorUser, "ConfigMap", cr("zk", 1))
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-0", app))
	b.update(model.ActorUser, "ConfigMap", cr("zk", 2))
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-1", app))
	return b
}

func TestNoDeleteOfLiveViolation(t *testing.T) {
	b := zkBase()
	b.get(ctrl, "ConfigMap", "zk", 1, 2, 2) // stale: sees rv 1 (replicas 1) from a cache at rev 2, head 4
	b.next(model.Event{Actor: ctrl, Op: model.OpList, Kind: "PersistentVolumeClaim", Namespace: ns, Server: 2, ReadRev: 4,
		Versions: []model.Version{{Name: "default/data-zk-0", Rev: 2}, {Name: "default/data-zk-1", Rev: 4}}})
	del := b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app))

	vs := Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	v := vs[0]
	require.Equal(t, "NoDeleteOfLive(member PVC)", v.Property)
	require.NotEmpty(t, v.Statement)
	require.Equal(t, del, v.Step)
	require.Equal(t, model.OpDelete, v.Event.Op)
	require.Equal(t, []int{5}, v.Related)
	for _, want := range []string{
		"controller/zk deleted PersistentVolumeClaim default/data-zk-1 (rv=4)",
		"against store revision 4",
		"ordinal 1 < committed spec.replicas=2",
		"step 5: Get ConfigMap default/zk, served by apiserver-2 from a watch cache at revision 2 while the store head was at revision 4",
		"it returned rv=1, the store held rv=3",
	} {
		require.Contains(t, v.Explanation, want)
	}
	s := v.String()
	require.Contains(t, s, "at step 7: controller/zk Delete PersistentVolumeClaim default/data-zk-1")
	require.Contains(t, s, "related steps: 5")
}

func TestNoDeleteOfLiveWithoutStaleRead(t *testing.T) {
	b := zkBase()
	b.get(ctrl, "ConfigMap", "zk", 3, 4, 1) // fresh
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-0", app))
	vs := Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	require.Equal(t, 6, vs[0].Step)
	require.Empty(t, vs[0].Related)
	require.Contains(t, vs[0].Explanation, "No stale read by controller/zk precedes the delete.")
}

func TestNoDeleteOfLiveNoViolation(t *testing.T) {
	b := zkBase()
	b.update(model.ActorUser, "ConfigMap", cr("zk", 1)) // scale down committed: rev 5
	b.get(ctrl, "ConfigMap", "zk", 5, 5, 1)
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app)) // ordinal 1 >= 1: orphan
	// A failed delete of a live PVC, and a delete by someone else than a
	// controller, are not the controller's deletes.
	b.op(ctrl, model.OpDelete, "PersistentVolumeClaim", "data-zk-0", "Conflict: the object has been modified")
	b.remove(model.ActorGC, "PersistentVolumeClaim", pvc("data-zk-0", app))
	require.Empty(t, Check(&b.h, memberPVC()))
}

func TestNoDeleteOfLiveJudgesBeforeState(t *testing.T) {
	// The delete is judged at the revision it was made against: the CR
	// becomes 1 only after the delete, so the delete of PVC 1 was of a
	// live member.
	b := zkBase()
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app))
	b.update(model.ActorUser, "ConfigMap", cr("zk", 1))
	vs := Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	require.Equal(t, 5, vs[0].Step)
}

// A delete that sets the deletionTimestamp is the decision to delete and is
// judged; repeating it on the terminating object (no change, same
// resourceVersion; or only a shorter grace period) is not a second
// deletion of a live object. The issue-12 regression: the old monitor
// judged the repeat against the same liveness and flagged it.
func TestNoDeleteOfLiveIgnoresRepeatedDeleteOfTerminatingObject(t *testing.T) {
	b := zkBase()
	b.update(model.ActorUser, "ConfigMap", cr("zk", 1)) // member 1 no longer wanted: rev 5
	term := pvc("data-zk-1", app)
	term.Finalizers = []string{"kubernetes.io/pvc-protection"}
	now := metav1.NewTime(model.Epoch)
	term.DeletionTimestamp = &now
	b.write(ctrl, model.OpDelete, "PersistentVolumeClaim", term, model.ChangeModified) // rev 6, legitimate
	b.update(model.ActorUser, "ConfigMap", cr("zk", 2))                                // member 1 wanted again: rev 7
	// The controller deletes again (it retries its clean-up): nothing
	// changes, the store answers with the same resourceVersion.
	b.next(model.Event{Actor: ctrl, Op: model.OpDelete, Kind: "PersistentVolumeClaim", Namespace: ns, Name: "data-zk-1", Server: 1, Rev: 6})
	require.Empty(t, Check(&b.h, memberPVC()))
	// A delete of a live (not terminating) member is still flagged.
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-0", app))
	vs := Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Explanation, "data-zk-0")
}

// stsDesired: the StatefulSet zk must have at least the CR's committed
// replicas.
func stsDesired() Property {
	return NoScaleBelow("NoScaleBelow(zk)", func(s *State, st *appsv1.StatefulSet) (int32, bool, string) {
		n, ok := crReplicas(s, st.Name)
		if !ok {
			return 0, false, ""
		}
		return int32(n), true, fmt.Sprintf("ConfigMap %s/%s has replicas=%d", ns, st.Name, n)
	})
}

func TestNoScaleBelowViolation(t *testing.T) {
	b := zkBase()
	b.create(ctrl, "StatefulSet", sts("zk", 2)) // rev 5
	b.get(ctrl, "ConfigMap", "zk", 1, 2, 2)
	w := b.update(ctrl, "StatefulSet", sts("zk", 1))
	vs := Check(&b.h, stsDesired())
	require.Len(t, vs, 1)
	require.Equal(t, w, vs[0].Step)
	for _, want := range []string{"controller/zk wrote StatefulSet default/zk with spec.replicas=1", "had spec.replicas=2",
		"At store revision 5 the desired size was 2", "ConfigMap default/zk has replicas=2"} {
		require.Contains(t, vs[0].Explanation, want)
	}
}

func TestNoScaleBelowNoViolation(t *testing.T) {
	b := &builder{}
	b.create(model.ActorUser, "ConfigMap", cr("zk", 2))
	b.create(ctrl, "StatefulSet", sts("zk", 2))
	b.update(model.ActorUser, "ConfigMap", cr("zk", 1))
	b.update(ctrl, "StatefulSet", sts("zk", 1)) // committed scale-down: fine
	b.update(model.ActorUser, "ConfigMap", cr("zk", 3))
	b.update(ctrl, "StatefulSet", sts("zk", 2)) // one step toward 3: not a scale-down
	b.update(ctrl, "StatefulSet", sts("zk", 2)) // unchanged, still below: not a scale-down
	b.op(ctrl, model.OpUpdate, "StatefulSet", "zk", "Conflict: stale")
	b.update(model.ActorUser, "StatefulSet", sts("zk", 1)) // not a controller
	require.Empty(t, Check(&b.h, stsDesired()))
}

// converged: the number of PVCs labelled app=zk equals the CR's replicas.
func converged() Property {
	return EventuallyConverges("EventuallyConverges(zk)", func(s *State) (bool, string) {
		n, _ := crReplicas(s, "zk")
		got := len(s.List("PersistentVolumeClaim", ns, labels.SelectorFromSet(app)))
		return got == n, fmt.Sprintf("%d PVC(s) labelled app=zk, spec.replicas=%d", got, n)
	})
}

func TestEventuallyConvergesViolationQuiescent(t *testing.T) {
	b := zkBase()
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-2", app)) // 3 PVCs, replicas 2
	settle := b.op(model.ActorClock, model.OpSettle, "", "", "")
	b.op(ctrl, model.OpReconcile, "ConfigMap", "zk", "")
	b.op(ctrl, model.OpReconcileDone, "ConfigMap", "zk", "")
	b.next(model.Event{Actor: model.ActorClock, Op: model.OpTick})
	q := b.op(model.ActorClock, model.OpQuiescent, "", "", "")
	vs := Check(&b.h, converged())
	require.Len(t, vs, 1)
	v := vs[0]
	require.Equal(t, q, v.Step)
	require.Equal(t, []int{settle}, v.Related)
	for _, want := range []string{
		"Settle at step 6 (t=0.6s); the history ended 4 steps and 0.4s of logical time later, at step 10 (t=1s, store revision 5)",
		"reached Quiescent at step 10",
		"At the end: 3 PVC(s) labelled app=zk, spec.replicas=2",
		"The predicate never held in this run",
		"Faults injected: none.",
	} {
		require.Contains(t, v.Explanation, want)
	}
}

func TestEventuallyConvergesViolationStepBoundAndFlap(t *testing.T) {
	b := zkBase()
	b.op(model.ActorClock, model.OpSettle, "", "", "")
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-2", app)) // step 6: false
	b.op(ctrl, model.OpReconcile, "ConfigMap", "zk", "")
	b.op(ctrl, model.OpReconcileDone, "ConfigMap", "zk", "")
	vs := Check(&b.h, converged())
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Explanation, "hit its step bound without reaching Quiescent")
	require.Contains(t, vs[0].Explanation, "first true after Settle after step 4, last held after step 4, and was false again after step 6")
}

// A liveness verdict names the faults of the run, each with its step: the
// crash with the API call and the reconcile it interrupted, the paused
// cache, the dropped event, the eviction, and the latest stale read; and
// the last step after which the predicate held.
func TestEventuallyConvergesNamesTheFaults(t *testing.T) {
	b := zkBase()                                                                                    // the predicate holds after step 4
	b.next(model.Event{Actor: model.ActorUser, Op: model.OpWorkload, Detail: "done: scale zk to 2"}) // a checkpoint
	rec := b.op(ctrl, model.OpReconcile, "ConfigMap", "zk", "")
	b.get(ctrl, "ConfigMap", "zk", 3, 4, 1)
	upd := b.update(ctrl, "ConfigMap", cr("zk", 3)) // now false: 2 PVCs, 3 replicas
	crash := b.next(model.Event{Actor: model.ActorFault, Op: model.OpCrash, Name: string(ctrl), Detail: "in reconcile default/zk before API call 3"}).Step
	restart := b.next(model.Event{Actor: model.ActorFault, Op: model.OpRestart, Name: string(ctrl), Detail: "apiserver-2"}).Step
	pause := b.next(model.Event{Actor: model.ActorFault, Op: model.OpPauseCache, Kind: "ConfigMap", Server: 2, ReadRev: 3}).Step
	stale := b.get(ctrl, "ConfigMap", "zk", 3, 3, 2)
	drop := b.next(model.Event{Actor: model.ActorFault, Op: model.OpDropEvent, Kind: "PersistentVolumeClaim", Namespace: ns, Name: "data-zk-1", Rev: 4, Detail: "MODIFIED for controller/zk"}).Step
	evict := b.next(model.Event{Actor: model.ActorFault, Op: model.OpEvict, Kind: "Pod", Namespace: ns, Name: "zk-1"}).Step
	settle := b.op(model.ActorClock, model.OpSettle, "", "", "")
	b.op(model.ActorClock, model.OpQuiescent, "", "", "")
	vs := Check(&b.h, converged())
	require.Len(t, vs, 1)
	v := vs[0]
	for _, want := range []string{
		"The predicate last held after step 4, before Settle (checked at the workload's steps and the faults), and never after it.",
		"Faults injected (5):",
		fmt.Sprintf("step %d: crash of controller/zk in its reconcile of ConfigMap default/zk begun at step %d, after API call 2 (Update ConfigMap default/zk at step %d)", crash, rec, upd),
		fmt.Sprintf("step %d: controller/zk restarted against apiserver-2", restart),
		fmt.Sprintf("step %d: the ConfigMap watch cache of apiserver-2 paused at revision 3", pause),
		fmt.Sprintf("step %d: dropped the watch event of PersistentVolumeClaim default/data-zk-1 at rev 4 (MODIFIED for controller/zk)", drop),
		fmt.Sprintf("step %d: evicted Pod default/zk-1", evict),
		fmt.Sprintf("Stale reads by controllers: 1; the latest at step %d: Get ConfigMap default/zk, served by apiserver-2", stale),
	} {
		require.Contains(t, v.Explanation, want)
	}
	require.Equal(t, []int{4, crash, restart, pause, stale, drop, evict, settle}, v.Related)
}

func TestEventuallyConvergesNoViolation(t *testing.T) {
	b := zkBase()
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-2", app))
	b.op(model.ActorClock, model.OpSettle, "", "", "")
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-2", app)) // converges
	b.op(model.ActorClock, model.OpQuiescent, "", "", "")
	require.Empty(t, Check(&b.h, converged()))

	// Without Settle there is no verdict, however wrong the end state.
	b = zkBase()
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-2", app))
	require.Empty(t, Check(&b.h, converged()))
}

func reconcileOnce(b *builder, errText string) int {
	b.op(ctrl, model.OpReconcile, "ConfigMap", "zk", "")
	b.op(ctrl, model.OpGet, "Pod", "zk-1", "NotFound: pods \"zk-1\" not found")
	return b.op(ctrl, model.OpReconcileDone, "ConfigMap", "zk", errText)
}

func TestNoStuckReconcileViolation(t *testing.T) {
	b := zkBase()
	const err = "NotFound: pods \"zk-1\" not found"
	settle(b)
	up := caughtUp(b)
	s1 := reconcileOnce(b, err)
	b.next(model.Event{Actor: model.ActorClock, Op: model.OpTick}) // time passes, store does not change
	s2 := reconcileOnce(b, err)
	s3 := reconcileOnce(b, err)
	vs := Check(&b.h, NoStuckReconcile(3))
	require.Len(t, vs, 1)
	v := vs[0]
	require.Equal(t, "NoStuckReconcile(3)", v.Property)
	require.Equal(t, s3, v.Step)
	require.Equal(t, []int{up, s1, s2}, v.Related)
	require.Contains(t, v.Explanation, fmt.Sprintf("at steps %d, %d, %d", s1, s2, s3))
	require.Contains(t, v.Explanation, fmt.Sprintf("every failure came after step %d", up))
	require.Contains(t, v.Explanation, "ConfigMap default/zk")
	require.Contains(t, v.Explanation, "stayed at revision 4")
	require.Contains(t, v.Explanation, "Faults injected: none.")
	require.Contains(t, v.Explanation, err)
}

func TestNoStuckReconcileNoViolation(t *testing.T) {
	const err = "NotFound: pods \"zk-1\" not found"
	// A change in between restarts the count.
	b := zkBase()
	settle(b)
	caughtUp(b)
	reconcileOnce(b, err)
	reconcileOnce(b, err)
	b.update(model.ActorUser, "ConfigMap", cr("zk", 3))
	reconcileOnce(b, err)
	reconcileOnce(b, err)
	// A different error restarts it too.
	reconcileOnce(b, "Conflict: retry")
	reconcileOnce(b, err)
	// So does a success.
	reconcileOnce(b, "")
	reconcileOnce(b, err)
	reconcileOnce(b, err)
	require.Empty(t, Check(&b.h, NoStuckReconcile(3)))
	// The same history with k=2 is stuck at the second failure.
	vs := Check(&b.h, NoStuckReconcile(2))
	require.Len(t, vs, 1)
	require.Equal(t, 12, vs[0].Step)
	require.Panics(t, func() { NoStuckReconcile(0) })
}

// While faults are active, or their effects linger after Settle (an
// informer not yet caught up), failures are expected: only failures after
// CaughtUp count, however many came before. The issue-12 regression: the
// old monitor counted the five fault-phase failures and fired at the first
// failure after Settle.
func TestNoStuckReconcileIgnoresFailuresBeforeCaughtUp(t *testing.T) {
	const err = "Conflict: the object has been modified"
	b := zkBase()
	for i := 0; i < 5; i++ {
		reconcileOnce(b, err)
	}
	settle(b)
	reconcileOnce(b, err) // after Settle, before the caches caught up
	reconcileOnce(b, err)
	require.Empty(t, Check(&b.h, NoStuckReconcile(3)))
	up := caughtUp(b)
	healed := *b
	healed.h.Events = append([]model.Event(nil), b.h.Events...)
	reconcileOnce(&healed, "")
	reconcileOnce(&healed, err)
	require.Empty(t, Check(&healed.h, NoStuckReconcile(3)))
	first := reconcileOnce(b, err)
	reconcileOnce(b, err)
	require.Empty(t, Check(&b.h, NoStuckReconcile(3)), "two failures after CaughtUp are not three")
	last := reconcileOnce(b, err)
	vs := Check(&b.h, NoStuckReconcile(3))
	require.Len(t, vs, 1)
	require.Equal(t, last, vs[0].Step)
	require.Equal(t, up, vs[0].Related[0])
	require.Equal(t, first, vs[0].Related[1])
	// Without a CaughtUp event nothing is judged.
	b2 := zkBase()
	settle(b2)
	for i := 0; i < 5; i++ {
		reconcileOnce(b2, err)
	}
	require.Empty(t, Check(&b2.h, NoStuckReconcile(3)))
}

func caughtUp(b *builder) int {
	return b.next(model.Event{Actor: model.ActorFault, Op: model.OpCaughtUp}).Step
}

func settle(b *builder) {
	b.next(model.Event{Actor: model.ActorFault, Op: model.OpSettle})
}

func TestNoStuckReconcileSeparatesRequests(t *testing.T) {
	b := &builder{}
	const err = "boom"
	settle(b)
	caughtUp(b)
	for i := 0; i < 2; i++ {
		for _, name := range []string{"a", "b"} {
			b.op(ctrl, model.OpReconcile, "ConfigMap", name, "")
			// ReconcileDone naming no request belongs to the latest Reconcile.
			b.next(model.Event{Actor: ctrl, Op: model.OpReconcileDone, Err: err})
		}
	}
	require.Empty(t, Check(&b.h, NoStuckReconcile(3)))
	vs := Check(&b.h, NoStuckReconcile(2))
	require.Len(t, vs, 1)
	require.Equal(t, 8, vs[0].Step)
	require.Equal(t, []int{2, 4}, vs[0].Related)
	require.Contains(t, vs[0].Explanation, "ConfigMap default/a")
}

func TestNoReconcilePanicAndEndless(t *testing.T) {
	b := zkBase()
	reconcileOnce(b, "")
	require.Empty(t, Check(&b.h, NoReconcilePanic(), NoEndlessReconcile()))

	p := b.next(model.Event{Actor: ctrl, Op: model.OpPanic, Kind: "ConfigMap", Namespace: ns, Name: "zk",
		Detail: "runtime error: index out of range\ngoroutine 7 [running]:\nzk.(*Reconciler).Reconcile(...)"}).Step
	sb := b.next(model.Event{Actor: ctrl, Op: model.OpStepBudget, Kind: "ConfigMap", Namespace: ns, Name: "zk", Detail: "200 API calls"}).Step
	vs := Check(&b.h, NoEndlessReconcile(), NoReconcilePanic())
	require.Len(t, vs, 2)
	require.Equal(t, "NoEndlessReconcile", vs[0].Property, "violations come in property order")
	require.Equal(t, sb, vs[0].Step)
	require.Contains(t, vs[0].Explanation, "200 API calls")
	require.Equal(t, "NoReconcilePanic", vs[1].Property)
	require.Equal(t, p, vs[1].Step)
	require.Contains(t, vs[1].Explanation, "goroutine 7 [running]")
	require.Contains(t, vs[1].Explanation, "ConfigMap default/zk")
	require.Contains(t, vs[1].String(), "\n  goroutine 7 [running]:")
}

func TestRunOnline(t *testing.T) {
	b := zkBase()
	b.get(ctrl, "ConfigMap", "zk", 1, 2, 2)
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app)) // step 6
	b.op(model.ActorClock, model.OpSettle, "", "", "")
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-0", app)) // step 8, second violation: ignored

	r := NewRun(converged(), memberPVC())
	var at []int
	for i := range b.h.Events {
		vs := r.Observe(&b.h.Events[i])
		if len(vs) > 0 {
			at = append(at, b.h.Events[i].Step)
			require.Equal(t, "NoDeleteOfLive(member PVC)", vs[0].Property)
		}
		require.Equal(t, b.h.Events[i].Step >= 6, r.Violations() != nil)
	}
	require.Equal(t, []int{6}, at, "one violation per property, at its first offending event")
	require.Equal(t, model.Revision(6), r.State().Revision())
	fin := r.Finish(&b.h)
	require.Len(t, fin, 1)
	require.Equal(t, "EventuallyConverges(zk)", fin[0].Property)
	require.Contains(t, fin[0].Explanation, "0 PVC(s) labelled app=zk, spec.replicas=2")
	require.Nil(t, r.Finish(&b.h))
	all := r.Violations()
	require.Len(t, all, 2)
	require.Equal(t, "EventuallyConverges(zk)", all[0].Property)

	// Check gives the same verdicts as the online run.
	require.Equal(t, all, Check(&b.h, converged(), memberPVC()))
}

func TestKindString(t *testing.T) {
	require.Equal(t, "safety", Safety.String())
	require.Equal(t, "liveness", Liveness.String())
	require.Equal(t, Liveness, converged().Kind)
	require.Equal(t, Safety, memberPVC().Kind)
}

func TestNoDeleteOfLiveReportsLatestStaleRead(t *testing.T) {
	b := zkBase()
	b.get(ctrl, "ConfigMap", "zk", 1, 2, 2) // stale Get, step 5: superseded by the next stale read
	b.next(model.Event{Actor: ctrl, Op: model.OpGet, Kind: "ConfigMap", Namespace: ns, Name: "zk", Server: 3, ReadRev: 0,
		Stale: true, Err: "NotFound: configmaps \"zk\" not found"}) // step 6
	b.get(model.ActorUser, "ConfigMap", "zk", 1, 2, 2) // another actor's stale read is not the controller's
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-0", app))
	vs := Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	require.Equal(t, []int{6}, vs[0].Related)
	require.Contains(t, vs[0].Explanation, "step 6: Get ConfigMap default/zk, served by apiserver-3 from a watch cache at revision 0")
	require.Contains(t, vs[0].Explanation, `it failed with "NotFound: configmaps \"zk\" not found" while the store held rv=3`)

	b = zkBase()
	b.next(model.Event{Actor: ctrl, Op: model.OpList, Kind: "ConfigMap", Namespace: ns, Server: 2, ReadRev: 1, Stale: true,
		Versions: []model.Version{{Name: "default/zk", Rev: 1}}})
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app))
	vs = Check(&b.h, memberPVC())
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Explanation, "step 5: List ConfigMap in namespace default, served by apiserver-2 from a watch cache at revision 1 while the store head was at revision 4; it returned 1 object(s)")
}

// While a graceful deletion is under way (a pod in its grace period: its
// deletionTimestamp still ahead), the store will change at the deadline by
// itself, so failures do not count towards NoStuckReconcile; once the
// deadline has passed they do again (an object held by a finalizer, whose
// deletionTimestamp is in the past, does not excuse them).
func TestNoStuckReconcileWaitsOutGracePeriods(t *testing.T) {
	const err = "read operation mode of zk-1: connection refused"
	b := zkBase()
	terminating := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "zk-1"}}
	deadline := model.Time(100*len(b.h.Events)) + 3000 // 3 s of logical time ahead: 30 more events
	at := metav1.NewTime(deadline.Wall())
	terminating.DeletionTimestamp = &at
	b.update(model.ActorFault, "Pod", terminating)
	settle(b)
	caughtUp(b)
	for i := 0; i < 5; i++ {
		reconcileOnce(b, err)
	}
	require.Empty(t, Check(&b.h, NoStuckReconcile(3)), "failures within the pod's grace period are waiting, not stuck")
	for b.h.Events[len(b.h.Events)-1].Time <= deadline {
		b.next(model.Event{Actor: model.ActorClock, Op: model.OpTick})
	}
	reconcileOnce(b, err)
	reconcileOnce(b, err)
	last := reconcileOnce(b, err)
	vs := Check(&b.h, NoStuckReconcile(3))
	require.Len(t, vs, 1, "past the deadline the failures count again")
	require.Equal(t, last, vs[0].Step)
}
