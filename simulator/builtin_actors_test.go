package simulator

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// Actor orders for the settle loop, which always runs the first enabled
// step: controllerFirst lets the StatefulSet controller win every race,
// nodeFirst lets the kubelet and pvc-protection win.
func controllerFirst() []Actor {
	return []Actor{NewStatefulSetController(), NewScheduler(), NewKubelet(), NewPVCProtection(), NewGarbageCollector()}
}

func nodeFirst() []Actor {
	return []Actor{NewScheduler(), NewKubelet(), NewPVCProtection(), NewGarbageCollector(), NewStatefulSetController()}
}

// settle runs the first enabled step of actors until none is enabled,
// checking that every step is exactly one successful recorded write that
// changed the store. It returns the labels of the steps run.
func settleActors(t *testing.T, w *World, actors []Actor) []string {
	t.Helper()
	var labels []string
	for i := 0; i < 500; i++ {
		var steps []Step
		for _, a := range actors {
			steps = a.Steps(w, steps)
		}
		if len(steps) == 0 {
			// Nothing to do now: let the clock run to the next timer
			// (the end of a pod's grace period), as the world does.
			var at model.Time
			found := false
			for _, a := range actors {
				if tm, ok := a.(Timed); ok {
					if t, ok := tm.NextTimer(); ok && (!found || t < at) {
						at, found = t, true
					}
				}
			}
			if !found {
				return labels
			}
			w.Clock.AdvanceTo(at)
			continue
		}
		st := steps[0]
		n, rev := len(w.History.Events), w.Store.Revision()
		st.Run()
		if len(w.History.Events) != n+1 {
			t.Fatalf("step %q recorded %d events, want 1", st.Label, len(w.History.Events)-n)
		}
		e := w.History.Events[n]
		if e.Actor != st.Actor || !e.Op.IsWrite() || e.Err != "" {
			t.Fatalf("step %q (%s) recorded %s", st.Label, st.Actor, e.Line())
		}
		if w.Store.Revision() != rev+1 {
			t.Fatalf("step %q did not change the store: %s", st.Label, e.Line())
		}
		labels = append(labels, st.Label)
	}
	t.Fatalf("did not settle after 500 steps; last: %v", labels[len(labels)-5:])
	return nil
}

func newActorTestWorld() (*World, *Client) {
	w := newBareWorld(testScheme(), 1)
	return w, w.Client(model.ActorUser, 1, true)
}

func testSet(replicas int32) *appsv1.StatefulSet {
	lbl := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "web-hs",
			Selector:    &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "disk"}},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

func peekPod(w *World, name string) *corev1.Pod {
	o, ok := w.Peek(&corev1.Pod{}, "default", name)
	if !ok {
		return nil
	}
	return o.(*corev1.Pod)
}

func peekClaim(w *World, name string) *corev1.PersistentVolumeClaim {
	o, ok := w.Peek(&corev1.PersistentVolumeClaim{}, "default", name)
	if !ok {
		return nil
	}
	return o.(*corev1.PersistentVolumeClaim)
}

func peekSet(w *World) *appsv1.StatefulSet {
	o, ok := w.Peek(&appsv1.StatefulSet{}, "default", "web")
	if !ok {
		return nil
	}
	return o.(*appsv1.StatefulSet)
}

// eventIndex returns the index of the first event after from matching.
func eventIndex(w *World, from int, match func(e *model.Event) bool) int {
	for i := from; i < len(w.History.Events); i++ {
		if match(&w.History.Events[i]) {
			return i
		}
	}
	return -1
}

func isEvent(actor model.Actor, op model.Op, kind, name string) func(e *model.Event) bool {
	return func(e *model.Event) bool {
		return e.Actor == actor && e.Op == op && e.Kind == kind && e.Name == name && e.Err == ""
	}
}

func scaleSet(t *testing.T, user *Client, replicas int32) {
	t.Helper()
	var sts appsv1.StatefulSet
	if err := user.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "web"}, &sts); err != nil {
		t.Fatal(err)
	}
	sts.Spec.Replicas = &replicas
	if err := user.Update(context.Background(), &sts); err != nil {
		t.Fatal(err)
	}
}

func checkStatus(t *testing.T, w *World, replicas, ready int32) {
	t.Helper()
	sts := peekSet(w)
	s := sts.Status
	if s.Replicas != replicas || s.ReadyReplicas != ready || s.AvailableReplicas != ready || s.CurrentReplicas != replicas || s.UpdatedReplicas != replicas || s.ObservedGeneration != sts.Generation {
		t.Fatalf("status %+v (generation %d), want replicas=%d ready=%d", s, sts.Generation, replicas, ready)
	}
}

func TestStatefulSetScaleUpOrderedReady(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(2)); err != nil {
		t.Fatal(err)
	}
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())

	sts := model.ActorStatefulSet
	for _, i := range []string{"0", "1"} {
		claim := eventIndex(w, start, isEvent(sts, model.OpCreate, "PersistentVolumeClaim", "data-web-"+i))
		pod := eventIndex(w, start, isEvent(sts, model.OpCreate, "Pod", "web-"+i))
		if claim < 0 || pod < 0 || claim > pod {
			t.Fatalf("claim data-web-%s created at %d, pod at %d: want the claim first\n%s", i, claim, pod, w.History.Lines())
		}
	}
	ready0 := eventIndex(w, start, func(e *model.Event) bool {
		p, ok := e.Object.(*corev1.Pod)
		return ok && e.Actor == model.ActorKubelet && p.Name == "web-0" && podRunningAndReady(p)
	})
	create1 := eventIndex(w, start, isEvent(sts, model.OpCreate, "Pod", "web-1"))
	if ready0 < 0 || create1 < ready0 {
		t.Fatalf("web-0 ready at %d, web-1 created at %d: OrderedReady wants web-0 ready first\n%s", ready0, create1, w.History.Lines())
	}

	set := peekSet(w)
	for i, name := range []string{"web-0", "web-1"} {
		p := peekPod(w, name)
		if p == nil || !podRunningAndReady(p) {
			t.Fatalf("pod %s: %+v", name, p)
		}
		if p.Labels["app"] != "web" || p.Labels[LabelStatefulSetPodName] != name {
			t.Errorf("pod %s labels %v", name, p.Labels)
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s owner %+v", name, p.OwnerReferences)
		}
		if p.Spec.Hostname != name || p.Spec.Subdomain != "web-hs" {
			t.Errorf("pod %s hostname %q subdomain %q", name, p.Spec.Hostname, p.Spec.Subdomain)
		}
		claim := "data-" + name
		if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].Name != "data" || p.Spec.Volumes[0].PersistentVolumeClaim == nil || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != claim {
			t.Errorf("pod %s volumes %+v", name, p.Spec.Volumes)
		}
		if p.Status.PodIP == "" || p.Status.StartTime == nil || len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready {
			t.Errorf("pod %s status %+v", name, p.Status)
		}
		pvc := peekClaim(w, claim)
		if pvc == nil || pvc.Labels["app"] != "web" || pvc.Labels["tier"] != "disk" || len(pvc.OwnerReferences) != 0 ||
			!slices.Contains(pvc.Finalizers, FinalizerPVCProtection) || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
			t.Errorf("claim %s: %+v", claim, pvc)
		}
		_ = i
	}
	if peekPod(w, "web-0").Status.PodIP == peekPod(w, "web-1").Status.PodIP {
		t.Errorf("pods share an IP")
	}
	checkStatus(t, w, 2, 2)
	t.Log("\n" + w.History.Lines())
}

func TestStatefulSetParallelCreatesWithoutWaiting(t *testing.T) {
	w, user := newActorTestWorld()
	set := testSet(2)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	if err := user.Create(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	labels := settleActors(t, w, controllerFirst())
	want := []string{"create pvc default/data-web-0", "create pod default/web-0", "create pvc default/data-web-1", "create pod default/web-1"}
	if len(labels) < 4 || strings.Join(labels[:4], ",") != strings.Join(want, ",") {
		t.Fatalf("steps %v, want to start with %v", labels, want)
	}
	checkStatus(t, w, 2, 2)
}

func TestStatefulSetScaleDownKeepsClaims(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(2)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	scaleSet(t, user, 1)
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())

	del := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpDelete, "Pod", "web-1"))
	confirm := eventIndex(w, start, isEvent(model.ActorKubelet, model.OpDelete, "Pod", "web-1"))
	if del < 0 || confirm < del {
		t.Fatalf("delete at %d, kubelet confirmation at %d\n%s", del, confirm, w.History.Lines())
	}
	if e := w.History.Events[del]; e.Change != model.ChangeModified {
		t.Errorf("the controller's delete should be graceful (pod stays terminating), got %s", e.Line())
	}
	if e := w.History.Events[confirm]; e.Change != model.ChangeDeleted {
		t.Errorf("the kubelet's confirmation should remove the pod, got %s", e.Line())
	}
	if peekPod(w, "web-1") != nil || peekPod(w, "web-0") == nil {
		t.Fatal("want web-0 only")
	}
	if c := peekClaim(w, "data-web-1"); c == nil || c.DeletionTimestamp != nil {
		t.Fatalf("data-web-1 should be retained: %+v", c)
	}
	checkStatus(t, w, 1, 1)
}

func TestStatefulSetScaleToZeroHighestFirst(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(2)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	scaleSet(t, user, 0)
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())

	del1 := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpDelete, "Pod", "web-1"))
	gone1 := eventIndex(w, start, isEvent(model.ActorKubelet, model.OpDelete, "Pod", "web-1"))
	del0 := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpDelete, "Pod", "web-0"))
	if del1 < 0 || gone1 < del1 || del0 < gone1 {
		t.Fatalf("web-1 deleted at %d, gone at %d, web-0 deleted at %d: want web-1 gone before web-0 is deleted\n%s", del1, gone1, del0, w.History.Lines())
	}
	if peekPod(w, "web-0") != nil || peekPod(w, "web-1") != nil {
		t.Fatal("pods left")
	}
	if peekClaim(w, "data-web-0") == nil || peekClaim(w, "data-web-1") == nil {
		t.Fatal("claims must be retained")
	}
	checkStatus(t, w, 0, 0)
}

func TestStatefulSetWhenScaledDeleteRemovesClaims(t *testing.T) {
	w, user := newActorTestWorld()
	set := testSet(2)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	}
	if err := user.Create(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	scaleSet(t, user, 1)
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())
	gone := eventIndex(w, start, isEvent(model.ActorKubelet, model.OpDelete, "Pod", "web-1"))
	delClaim := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpDelete, "PersistentVolumeClaim", "data-web-1"))
	if gone < 0 || delClaim < gone {
		t.Fatalf("pod gone at %d, claim deleted at %d: want the claim deleted after its pod is gone\n%s", gone, delClaim, w.History.Lines())
	}
	if peekClaim(w, "data-web-1") != nil || peekClaim(w, "data-web-0") == nil {
		t.Fatal("want data-web-0 only")
	}
}

func TestStatefulSetReplacesFailedPod(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(1)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	old := peekPod(w, "web-0").DeepCopy()
	old.Status.Phase = corev1.PodFailed
	if err := user.Status().Update(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	p := peekPod(w, "web-0")
	if p == nil || p.UID == old.UID || !podRunningAndReady(p) {
		t.Fatalf("want a new running web-0, got %+v", p)
	}
}

func TestClaimProtectionAndTerminatingClaim(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	if err := user.Create(ctx, testSet(1)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	oldClaim := peekClaim(w, "data-web-0").DeepCopy()

	// A claim deleted while its pod runs stays Terminating.
	if err := user.Delete(ctx, oldClaim.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	if c := peekClaim(w, "data-web-0"); c == nil || c.DeletionTimestamp == nil || c.UID != oldClaim.UID {
		t.Fatalf("claim should be terminating: %+v", c)
	}
	if p := peekPod(w, "web-0"); p == nil || !podRunningAndReady(p) {
		t.Fatal("pod should keep running")
	}

	// The pod is deleted; the controller wins the race against
	// pvc-protection and recreates the pod over the terminating claim. The
	// new pod is never scheduled (its claim is terminating), so it does
	// not use the claim: pvc-protection releases it, the controller
	// re-creates the claim for its pending pod (new UID), and the pod is
	// bound and runs.
	oldPod := peekPod(w, "web-0").DeepCopy()
	if err := user.Delete(ctx, oldPod.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())
	podCreate := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpCreate, "Pod", "web-0"))
	release := eventIndex(w, start, isEvent(model.ActorPVCProtection, model.OpUpdate, "PersistentVolumeClaim", "data-web-0"))
	recreate := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpCreate, "PersistentVolumeClaim", "data-web-0"))
	bind := eventIndex(w, start, isEvent(model.ActorKubelet, model.OpCreate, "Pod", "web-0"))
	if podCreate < 0 || release < podCreate || w.History.Events[release].Change != model.ChangeDeleted || recreate < release || bind < recreate {
		t.Fatalf("want pod re-created, claim released and re-created, pod bound, in that order; got %d %d %d %d\n%s", podCreate, release, recreate, bind, w.History.Lines())
	}
	c := peekClaim(w, "data-web-0")
	if c == nil || c.UID == oldClaim.UID || c.DeletionTimestamp != nil {
		t.Fatalf("want a fresh claim, got %+v", c)
	}
	if p := peekPod(w, "web-0"); p == nil || p.UID == oldPod.UID || !podRunningAndReady(p) || p.Spec.NodeName != NodeName {
		t.Fatalf("want a new web-0 bound and running, got %+v", p)
	}
	checkStatus(t, w, 1, 1)
	t.Log("\n" + w.History.Lines())
}

// A StatefulSet deleted and re-created while its old claim is terminating
// (deleted while the old pod still ran) does not deadlock. The issue-12
// regression: PVC protection counted the new set's pod, never scheduled
// because its claim was terminating, as a user of the claim, so the claim
// never went and the pod never ran ("0 ready pods, 0 live PVCs"). A real
// pvc-protection controller counts only pods bound to a node.
func TestStatefulSetRecreatedWhileClaimTerminatingDoesNotDeadlock(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	if err := user.Create(ctx, testSet(1)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	oldClaim, oldPod := peekClaim(w, "data-web-0").DeepCopy(), peekPod(w, "web-0").DeepCopy()
	if err := user.Delete(ctx, oldClaim.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := user.Delete(ctx, peekSet(w).DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := user.Create(ctx, testSet(1)); err != nil {
		t.Fatal(err)
	}
	// The set's controller wins every race: the garbage collector deletes
	// the old pod, the kubelet confirms after its grace period, and the
	// new set creates web-0 at once, over the claim still terminating.
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())
	if i := eventIndex(w, start, isEvent(model.ActorStatefulSet, model.OpCreate, "Pod", "web-0")); i < 0 || eventIndex(w, i, isEvent(model.ActorPVCProtection, model.OpUpdate, "PersistentVolumeClaim", "data-web-0")) < 0 {
		t.Fatalf("want the new pod created before the old claim was released:\n%s", w.History.Lines())
	}
	c := peekClaim(w, "data-web-0")
	p := peekPod(w, "web-0")
	if c == nil || c.UID == oldClaim.UID || c.DeletionTimestamp != nil || p == nil || p.UID == oldPod.UID || !podRunningAndReady(p) {
		t.Fatalf("deadlocked: claim %+v\npod %+v\n%s", c, p, w.History.Lines())
	}
	checkStatus(t, w, 1, 1)
}

func ownedConfigMap(name string, owners ...*corev1.ConfigMap) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	for _, o := range owners {
		t := true
		cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID, BlockOwnerDeletion: &t})
	}
	return cm
}

func peekCM(w *World, name string) *corev1.ConfigMap {
	o, ok := w.Peek(&corev1.ConfigMap{}, "default", name)
	if !ok {
		return nil
	}
	return o.(*corev1.ConfigMap)
}

// gcFixture creates owner, a dependent ConfigMap and a dependent Secret.
func gcFixture(t *testing.T) (*World, *Client, *corev1.ConfigMap) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner"}}
	if err := user.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if err := user.Create(ctx, ownedConfigMap("dep", owner)); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dep-secret", OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}}
	if err := user.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	if labels := settleActors(t, w, controllerFirst()); len(labels) != 0 {
		t.Fatalf("nothing to do yet, got %v", labels)
	}
	return w, user, owner
}

func TestGCBackground(t *testing.T) {
	w, user, owner := gcFixture(t)
	if err := user.Delete(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	labels := settleActors(t, w, controllerFirst())
	if strings.Join(labels, ",") != "delete ConfigMap default/dep,delete Secret default/dep-secret" {
		t.Fatalf("steps %v", labels)
	}
	if peekCM(w, "dep") != nil || peekCM(w, "owner") != nil {
		t.Fatal("owner and dependent should be gone")
	}
}

func TestGCForeground(t *testing.T) {
	w, user, owner := gcFixture(t)
	start := len(w.History.Events)
	if err := user.Delete(context.Background(), owner, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	if o := peekCM(w, "owner"); o == nil || !slices.Contains(o.Finalizers, FinalizerForeground) {
		t.Fatalf("owner should wait for its dependents: %+v", o)
	}
	settleActors(t, w, controllerFirst())
	depGone := eventIndex(w, start, isEvent(model.ActorGC, model.OpDelete, "ConfigMap", "dep"))
	ownerGone := eventIndex(w, start, func(e *model.Event) bool {
		return e.Actor == model.ActorGC && e.Name == "owner" && e.Change == model.ChangeDeleted
	})
	if depGone < 0 || ownerGone < depGone {
		t.Fatalf("dependent deleted at %d, owner gone at %d\n%s", depGone, ownerGone, w.History.Lines())
	}
	if peekCM(w, "dep") != nil || peekCM(w, "owner") != nil {
		t.Fatal("owner and dependent should be gone")
	}
	if o, _ := w.Peek(&corev1.Secret{}, "default", "dep-secret"); o != nil {
		t.Fatal("non-blocking dependent should be gone too")
	}
}

func TestGCOrphan(t *testing.T) {
	w, user, owner := gcFixture(t)
	if err := user.Delete(context.Background(), owner, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	labels := settleActors(t, w, controllerFirst())
	want := "orphan ConfigMap default/dep,orphan Secret default/dep-secret,finalize orphan ConfigMap default/owner"
	if strings.Join(labels, ",") != want {
		t.Fatalf("steps %v, want %s", labels, want)
	}
	dep := peekCM(w, "dep")
	if dep == nil || len(dep.OwnerReferences) != 0 || peekCM(w, "owner") != nil {
		t.Fatalf("want the dependent kept without owner references and the owner gone; dep=%+v", dep)
	}
}

func TestGCKeepsDependentWithLiveOwner(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}}
	for _, o := range []*corev1.ConfigMap{a, b} {
		if err := user.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := user.Create(ctx, ownedConfigMap("dep", a, b)); err != nil {
		t.Fatal(err)
	}
	if err := user.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	labels := settleActors(t, w, controllerFirst())
	dep := peekCM(w, "dep")
	if len(labels) != 1 || dep == nil || len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != b.UID {
		t.Fatalf("steps %v; dep %+v: want the dangling reference dropped and the dependent kept", labels, dep)
	}
	// An owner reference with the right name but a stale UID is dangling.
	if err := user.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	b2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}}
	if err := user.Create(ctx, b2); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	if peekCM(w, "dep") != nil {
		t.Fatal("dependent of a recreated owner (new UID) should be collected")
	}
}

func TestDeletingStatefulSetCollectsPodsKeepsClaims(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	if err := user.Create(ctx, testSet(2)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	if err := user.Delete(ctx, peekSet(w).DeepCopy()); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	if peekPod(w, "web-0") != nil || peekPod(w, "web-1") != nil {
		t.Fatal("pods should be collected with their set")
	}
	if peekClaim(w, "data-web-0") == nil || peekClaim(w, "data-web-1") == nil {
		t.Fatal("claims are retained")
	}
}

func TestBuiltinStepsMemoizedAndAllocationFree(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(3)); err != nil {
		t.Fatal(err)
	}
	actors := controllerFirst()
	buf := make([]Step, 0, 16)
	for _, a := range actors {
		buf = a.Steps(w, buf)
	}
	if len(buf) != 1 || buf[0].Label != "create pvc default/data-web-0" {
		t.Fatalf("steps %v", buf)
	}
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		for _, a := range actors {
			b = a.Steps(w, b)
		}
	})
	if allocs != 0 {
		t.Fatalf("Steps at an unchanged revision allocated %.1f times", allocs)
	}
	buf[0].Run()
	buf = buf[:0]
	for _, a := range actors {
		buf = a.Steps(w, buf)
	}
	if len(buf) != 1 || buf[0].Label != "create pod default/web-0" {
		t.Fatalf("after a write the steps must be recomputed, got %v", buf)
	}
}

func TestBuiltinActorsDeterministic(t *testing.T) {
	run := func() string {
		w, user := newActorTestWorld()
		if err := user.Create(context.Background(), testSet(3)); err != nil {
			t.Fatal(err)
		}
		settleActors(t, w, controllerFirst())
		scaleSet(t, user, 1)
		settleActors(t, w, nodeFirst())
		return w.History.Lines()
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
	}
}

func TestStatefulSetAdoptsOrphanAndRespectsForeignPods(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	ctrl := true
	foreign := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid", Controller: &ctrl}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	// Keep the foreign pod's owner alive so the collector leaves it alone.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}
	if err := user.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	foreign.OwnerReferences[0].UID = other.UID
	for _, p := range []*corev1.Pod{orphan, foreign} {
		if err := user.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	set := testSet(2)
	set.Spec.VolumeClaimTemplates = nil
	if err := user.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	labels := settleActors(t, w, controllerFirst())
	if labels[0] != "adopt pod default/web-0" {
		t.Fatalf("steps %v", labels)
	}
	for _, l := range labels {
		if strings.Contains(l, "web-1") && strings.HasPrefix(l, "create") {
			t.Fatalf("the controller must not try to create over a foreign pod: %v", labels)
		}
	}
	p := peekPod(w, "web-0")
	if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != peekSet(w).UID || p.UID != orphan.UID {
		t.Fatalf("web-0 not adopted: %+v", p.OwnerReferences)
	}
	checkStatus(t, w, 1, 1)
}

func TestKubeletConfirmsOnceAndWaitsForFinalizers(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Finalizers: []string{"example.com/hold"}},
		Spec: corev1.PodSpec{NodeName: NodeName, Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	if err := user.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := user.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	// Terminating for the grace period: the kubelet has nothing to do
	// until the clock reaches the deletionTimestamp (now + 30 s).
	k := NewKubelet()
	if steps := k.Steps(w, nil); len(steps) != 0 {
		t.Fatalf("kubelet steps during the grace period: %v", steps[0].Label)
	}
	if at, ok := k.(Timed).NextTimer(); !ok || at != w.Clock.Now()+30*1000 {
		t.Fatalf("kubelet timer %v %v, want the end of the grace period at %v", at, ok, w.Clock.Now()+30*1000)
	}
	labels := settleActors(t, w, controllerFirst())
	if w.Clock.Now() != 30*1000 {
		t.Fatalf("confirmed at t=%v, want after the 30 s grace period", w.Clock.Now())
	}
	if strings.Join(labels, ",") != "confirm delete pod default/p" {
		t.Fatalf("steps %v", labels)
	}
	got := peekPod(w, "p")
	if got == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("pod should wait for its finalizer with grace period 0: %+v", got)
	}
	np := got.DeepCopy()
	np.Finalizers = nil
	if err := user.Update(ctx, np); err != nil {
		t.Fatal(err)
	}
	if peekPod(w, "p") != nil {
		t.Fatal("pod should be gone with its last finalizer")
	}
}

// BenchmarkBuiltinStepsFresh measures the built-in actors recomputing their
// steps after a write (the memo cleared), over a settled 3-replica set.
func BenchmarkBuiltinStepsFresh(b *testing.B) {
	w, user := newActorTestWorld()
	if err := user.Create(context.Background(), testSet(3)); err != nil {
		b.Fatal(err)
	}
	actors := controllerFirst()
	for i := 0; i < 100; i++ {
		var steps []Step
		for _, a := range actors {
			steps = a.Steps(w, steps)
		}
		if len(steps) == 0 {
			break
		}
		steps[0].Run()
	}
	buf := make([]Step, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, a := range actors {
			switch a := a.(type) {
			case *StatefulSetController:
				a.memo = stepMemo{}
			case *Kubelet:
				a.memo = stepMemo{}
			case *PVCProtection:
				a.memo = stepMemo{}
			case *GarbageCollector:
				a.memo = stepMemo{}
			}
			buf = a.Steps(w, buf)
		}
	}
}

func TestStatefulSetWhenDeletedDeleteCollectsClaims(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	set := testSet(1)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if err := user.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	c := peekClaim(w, "data-web-0")
	if c == nil || len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != peekSet(w).UID || metav1.GetControllerOf(c) != nil {
		t.Fatalf("claim should be owned (not controlled) by its set: %+v", c)
	}
	if err := user.Delete(ctx, peekSet(w).DeepCopy()); err != nil {
		t.Fatal(err)
	}
	start := len(w.History.Events)
	settleActors(t, w, controllerFirst())
	podGone := eventIndex(w, start, isEvent(model.ActorKubelet, model.OpDelete, "Pod", "web-0"))
	claimGone := eventIndex(w, start, func(e *model.Event) bool { return e.Name == "data-web-0" && e.Change == model.ChangeDeleted })
	if podGone < 0 || claimGone < podGone || peekClaim(w, "data-web-0") != nil {
		t.Fatalf("pod gone at %d, claim gone at %d: want the claim to go after its pod\n%s", podGone, claimGone, w.History.Lines())
	}
}
