package casskop

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

const (
	testNamespace = "cassandra"
	testCluster   = "cc"
)

var (
	testSts  = StatefulSetName(testCluster, "dc1", "rack1")
	testKey  = types.NamespacedName{Namespace: testNamespace, Name: testCluster}
	testRack = DCRackName("dc1", "rack1")
	pod0     = PodName(testSts, 0)
	pod1     = PodName(testSts, 1)
)

// fakeNodes plays the Cassandra nodes' agents. A node answers only while its
// pod exists in the store; Decommission moves it to LEAVING, and step() moves
// every LEAVING node to DECOMMISSIONED, standing for the node's own progress.
type fakeNodes struct {
	store         client.Client
	modes         map[string]string
	decommissions []string
	hostIDCalls   int
}

func (n *fakeNodes) reachable(ctx context.Context, namespace, pod string) error {
	if err := n.store.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pod}, &corev1.Pod{}); err != nil {
		return fmt.Errorf("node %s unreachable: %w", pod, err)
	}
	return nil
}

func (n *fakeNodes) mode(pod string) string {
	if m, ok := n.modes[pod]; ok {
		return m
	}
	return ModeNormal
}

func (n *fakeNodes) OperationMode(ctx context.Context, namespace, pod string) (string, error) {
	if err := n.reachable(ctx, namespace, pod); err != nil {
		return "", err
	}
	return n.mode(pod), nil
}

func (n *fakeNodes) Decommission(ctx context.Context, namespace, pod string) error {
	if err := n.reachable(ctx, namespace, pod); err != nil {
		return err
	}
	n.decommissions = append(n.decommissions, pod)
	if n.mode(pod) == ModeNormal {
		n.modes[pod] = ModeLeaving
	}
	return nil
}

func (n *fakeNodes) HostIDMap(ctx context.Context, namespace, pod string) (map[string]string, error) {
	if err := n.reachable(ctx, namespace, pod); err != nil {
		return nil, err
	}
	n.hostIDCalls++
	return map[string]string{pod: "host-" + pod}, nil
}

func (n *fakeNodes) step() {
	pods := make([]string, 0, len(n.modes))
	for p := range n.modes {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	for _, p := range pods {
		if n.modes[p] == ModeLeaving {
			n.modes[p] = ModeDecommissioned
		}
	}
}

// world is the ground truth (a fake client), a logical clock and the nodes.
// The test plays the StatefulSet controller and the kubelet.
type world struct {
	t     *testing.T
	ctx   context.Context
	store client.WithWatch
	clock model.Clock
	nodes *fakeNodes
}

func newWorld(t *testing.T, nodesPerRacks int32) *world {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, AddToScheme(scheme))
	cc := &CassandraCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testCluster},
		Spec: CassandraClusterSpec{
			NodesPerRacks: nodesPerRacks,
			DeletePVC:     true,
			Topology:      Topology{DC: []DC{{Name: "dc1", Rack: []Rack{{Name: "rack1"}}}}},
		},
	}
	store := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cc).Build()
	return &world{t: t, ctx: context.Background(), store: store,
		nodes: &fakeNodes{store: store, modes: map[string]string{}}}
}

func (w *world) reconciler(v Variant, c client.Client) *Reconciler {
	return NewReconciler(c, Options{Variant: v, Nodes: w.nodes, Now: w.clock.Wall})
}

func (w *world) reconcile(r *Reconciler) (reconcile.Result, error) {
	return r.Reconcile(w.ctx, reconcile.Request{NamespacedName: testKey})
}

func (w *world) mustReconcile(r *Reconciler) {
	w.t.Helper()
	res, err := w.reconcile(r)
	require.NoError(w.t, err)
	require.Equal(w.t, RequeueDelay, res.RequeueAfter)
}

func (w *world) cluster() *CassandraCluster {
	w.t.Helper()
	cc := &CassandraCluster{}
	require.NoError(w.t, w.store.Get(w.ctx, testKey, cc))
	return cc
}

func (w *world) rack() *CassandraRackStatus {
	w.t.Helper()
	rs := w.cluster().Status.CassandraRackStatus[testRack]
	require.NotNil(w.t, rs, "rack status missing")
	return rs
}

func (w *world) statefulSet() *appsv1.StatefulSet {
	w.t.Helper()
	sts := &appsv1.StatefulSet{}
	require.NoError(w.t, w.store.Get(w.ctx, types.NamespacedName{Namespace: testNamespace, Name: testSts}, sts))
	return sts
}

func (w *world) exists(obj client.Object, name string) bool {
	w.t.Helper()
	err := w.store.Get(w.ctx, types.NamespacedName{Namespace: testNamespace, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(w.t, err)
	return true
}

func (w *world) setNodesPerRacks(n int32) {
	w.t.Helper()
	cc := w.cluster()
	cc.Spec.NodesPerRacks = n
	require.NoError(w.t, w.store.Update(w.ctx, cc))
}

// settle plays the StatefulSet controller and the kubelet to completion:
// pods beyond spec.replicas go (their PVCs stay), missing pods and PVCs are
// created, pods run and are ready, and the status reports it.
func (w *world) settle() {
	w.t.Helper()
	var list appsv1.StatefulSetList
	require.NoError(w.t, w.store.List(w.ctx, &list, client.InNamespace(testNamespace)))
	for i := range list.Items {
		sts := &list.Items[i]
		want := *sts.Spec.Replicas
		var pods corev1.PodList
		require.NoError(w.t, w.store.List(w.ctx, &pods, client.InNamespace(testNamespace),
			client.MatchingLabels(sts.Spec.Selector.MatchLabels)))
		for j := range pods.Items {
			ord, err := strconv.Atoi(strings.TrimPrefix(pods.Items[j].Name, sts.Name+"-"))
			require.NoError(w.t, err)
			if int32(ord) >= want {
				require.NoError(w.t, w.store.Delete(w.ctx, &pods.Items[j]))
				delete(w.nodes.modes, pods.Items[j].Name)
			}
		}
		for ord := int32(0); ord < want; ord++ {
			name := PodName(sts.Name, ord)
			if !w.exists(&corev1.PersistentVolumeClaim{}, PVCName(name)) {
				tmpl := sts.Spec.VolumeClaimTemplates[0]
				require.NoError(w.t, w.store.Create(w.ctx, &corev1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: PVCName(name), Labels: tmpl.Labels},
					Spec:       tmpl.Spec,
				}))
			}
			if w.exists(&corev1.Pod{}, name) {
				continue
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, Labels: sts.Spec.Template.Labels},
				Spec:       sts.Spec.Template.Spec,
			}
			require.NoError(w.t, w.store.Create(w.ctx, pod))
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
			require.NoError(w.t, w.store.Status().Update(w.ctx, pod))
			w.nodes.modes[name] = ModeNormal
		}
		sts.Status.Replicas, sts.Status.ReadyReplicas = want, want
		require.NoError(w.t, w.store.Status().Update(w.ctx, sts))
	}
}

// tick is one round of the world: reconcile, let the StatefulSet controller
// and the nodes catch up, move the clock by the requeue delay.
func (w *world) tick(r *Reconciler) error {
	_, err := w.reconcile(r)
	w.settle()
	w.nodes.step()
	w.clock.Advance(model.FromDuration(RequeueDelay))
	return err
}

// driveUntil ticks until done holds, failing on a reconcile error or after
// maxTicks.
func (w *world) driveUntil(r *Reconciler, maxTicks int, what string, done func() bool) {
	w.t.Helper()
	for i := 0; i < maxTicks; i++ {
		if done() {
			return
		}
		require.NoError(w.t, w.tick(r), "tick %d while waiting for %s", i, what)
	}
	require.True(w.t, done(), "%s not reached after %d ticks; rack status %+v", what, maxTicks, w.rack())
}

// bootstrap takes a fresh world through defaults, creation and
// initialisation, checking each step.
func (w *world) bootstrap(r *Reconciler) {
	w.t.Helper()
	res, err := w.reconcile(r)
	require.NoError(w.t, err)
	assert.Equal(w.t, RequeueDelay, res.RequeueAfter)
	cc := w.cluster()
	assert.Contains(w.t, cc.Finalizers, PVCToDeleteFinalizer)
	assert.Equal(w.t, DefaultImage, cc.Spec.Image)
	assert.Equal(w.t, DefaultDataCapacity, cc.Spec.DataCapacity)
	rs := cc.Status.CassandraRackStatus[testRack]
	require.NotNil(w.t, rs)
	assert.Equal(w.t, ActionInitializing, rs.CassandraLastAction.Name)
	assert.Equal(w.t, StatusOngoing, rs.CassandraLastAction.Status)
	require.NotNil(w.t, rs.CassandraLastAction.StartTime)
	assert.True(w.t, rs.CassandraLastAction.StartTime.Time.Equal(w.clock.Wall()), "start time comes from the logical clock")
	assert.False(w.t, w.exists(&appsv1.StatefulSet{}, testSts), "defaults reconcile must stop before creating anything")

	w.mustReconcile(r)
	sts := w.statefulSet()
	assert.Equal(w.t, cc.Spec.NodesPerRacks, *sts.Spec.Replicas)
	require.Len(w.t, sts.Spec.VolumeClaimTemplates, 1)
	assert.Equal(w.t, DataVolumeClaimTemplate, sts.Spec.VolumeClaimTemplates[0].Name)
	assert.Equal(w.t, "3Gi", sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String())
	owner := metav1.GetControllerOf(sts)
	require.NotNil(w.t, owner, "StatefulSet must be owned by the CR")
	assert.Equal(w.t, "CassandraCluster", owner.Kind)
	assert.Equal(w.t, testCluster, owner.Name)
	assert.True(w.t, w.exists(&corev1.Service{}, ServiceName(testCluster)))
	assert.True(w.t, w.exists(&policyv1.PodDisruptionBudget{}, PodDisruptionBudgetName(testCluster)))

	w.settle()
	w.mustReconcile(r)
	rs = w.rack()
	assert.Equal(w.t, StatusDone, rs.CassandraLastAction.Status, "initialisation ends once the StatefulSet is ready")
	assert.Equal(w.t, PhaseRunning, rs.Phase)
	assert.Positive(w.t, w.nodes.hostIDCalls, "the pod state check asks a ready node for the host ID map")
}

func TestBootstrapDefaultsFinalizerAndStatefulSet(t *testing.T) {
	w := newWorld(t, 2)
	w.bootstrap(w.reconciler(Buggy, w.store))
	assert.True(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)))
}

func TestNoFaultScaleDownThenUp(t *testing.T) {
	for _, v := range []Variant{Buggy, UpstreamFix} {
		t.Run(string(v), func(t *testing.T) {
			w := newWorld(t, 2)
			r := w.reconciler(v, w.store)
			w.bootstrap(r)
			w.setNodesPerRacks(1)

			// Scale-down detected; the highest ordinal node is labelled and
			// its decommission started; the StatefulSet waits.
			w.mustReconcile(r)
			rs := w.rack()
			assert.Equal(t, ActionScaleDown, rs.CassandraLastAction.Name)
			assert.Equal(t, StatusToDo, rs.CassandraLastAction.Status)
			assert.Equal(t, StatusOngoing, rs.PodLastOperation.Status)
			assert.Equal(t, []string{pod1}, rs.PodLastOperation.Pods)
			assert.Equal(t, []string{pod1}, w.nodes.decommissions)
			p := &corev1.Pod{}
			require.True(t, w.exists(p, pod1))
			assert.Equal(t, OperationDecommission, p.Labels[LabelOperationName])
			assert.Equal(t, StatusOngoing, p.Labels[LabelOperationStatus])
			assert.Equal(t, w.clock.Wall().Format(operationStartLayout), p.Labels[LabelOperationStart])
			assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas)

			// LEAVING: wait.
			w.mustReconcile(r)
			assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas)
			assert.Equal(t, StatusOngoing, w.rack().PodLastOperation.Status)

			// DECOMMISSIONED: Finalizing, and the same reconcile scales.
			w.nodes.step()
			w.mustReconcile(r)
			assert.Equal(t, int32(1), *w.statefulSet().Spec.Replicas)
			rs = w.rack()
			assert.Equal(t, StatusFinalizing, rs.PodLastOperation.Status)
			assert.Equal(t, StatusOngoing, rs.CassandraLastAction.Status)

			// The StatefulSet removes pod 1; the operator deletes its PVC.
			w.settle()
			assert.True(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)), "the StatefulSet keeps PVCs")
			w.mustReconcile(r)
			assert.False(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)))
			rs = w.rack()
			assert.Equal(t, StatusDone, rs.PodLastOperation.Status)
			assert.Equal(t, []string{pod1}, rs.PodLastOperation.PodsOK)
			assert.Empty(t, rs.PodLastOperation.Pods)

			w.driveUntil(r, 10, "ScaleDown done", func() bool {
				return w.rack().CassandraLastAction.Status == StatusDone
			})
			rs = w.rack()
			assert.Equal(t, ActionScaleDown, rs.CassandraLastAction.Name)
			assert.Equal(t, OperationDecommission, rs.PodLastOperation.Name)
			assert.Equal(t, StatusDone, rs.PodLastOperation.Status)
			assert.Equal(t, int32(1), *w.statefulSet().Spec.Replicas)
			assert.True(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod0)), "the kept node's PVC stays")
			assert.Equal(t, []string{pod1}, w.nodes.decommissions, "only pod 1 is ever decommissioned")
			cc := w.cluster()
			assert.Equal(t, ActionScaleDown, cc.Status.LastClusterAction)
			assert.Equal(t, StatusDone, cc.Status.LastClusterActionStatus)

			// A later change back to 2 is served.
			w.setNodesPerRacks(2)
			w.driveUntil(r, 10, "ScaleUp done", func() bool {
				la := w.rack().CassandraLastAction
				return la.Name == ActionScaleUp && la.Status == StatusDone
			})
			assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas)
			assert.True(t, w.exists(&corev1.Pod{}, pod1))
		})
	}
}

// errCrash is what the crashing client panics with at the crash point.
var errCrash = errors.New("controller crashed")

// crashingClient forwards to the store until an Update for which crashOn
// holds, which it applies first when applied is true, and then panics; it
// refuses every later call: the deferred status write that runs while the
// panic unwinds never reaches the store, as in a process that died.
func crashingClient(store client.WithWatch, crashOn func(client.Object) bool, applied bool) client.WithWatch {
	crashed := false
	refuse := func() error {
		if crashed {
			return errCrash
		}
		return nil
	}
	return interceptor.NewClient(store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := refuse(); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := refuse(); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := refuse(); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := refuse(); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := refuse(); err != nil {
				return err
			}
			if !crashOn(obj) {
				return c.Update(ctx, obj, opts...)
			}
			if applied {
				if err := c.Update(ctx, obj, opts...); err != nil {
					return err
				}
			}
			crashed = true
			panic(errCrash)
		},
	})
}

func isStatefulSet(obj client.Object) bool {
	_, ok := obj.(*appsv1.StatefulSet)
	return ok
}

func isCluster(obj client.Object) bool {
	_, ok := obj.(*CassandraCluster)
	return ok
}

// reconcileCrashing runs one reconcile through c and requires it to crash.
func (w *world) reconcileCrashing(r *Reconciler) {
	w.t.Helper()
	defer func() {
		require.Equal(w.t, errCrash, recover(), "the reconcile must reach the crash point")
	}()
	_, _ = w.reconcile(r)
}

// crashAfterScale runs a 2 -> 1 scale-down up to the reconcile that sees the
// node DECOMMISSIONED, crashes that reconcile right after its StatefulSet
// update, and lets the StatefulSet controller remove pod 1.
func crashAfterScale(t *testing.T, v Variant) *world {
	w := newWorld(t, 2)
	r := w.reconciler(v, w.store)
	w.bootstrap(r)
	w.setNodesPerRacks(1)
	w.mustReconcile(r) // decommission started, node LEAVING
	w.nodes.step()     // node DECOMMISSIONED
	require.Equal(t, ModeDecommissioned, w.nodes.mode(pod1))

	w.reconcileCrashing(w.reconciler(v, crashingClient(w.store, isStatefulSet, true)))
	assert.Equal(t, int32(1), *w.statefulSet().Spec.Replicas, "the StatefulSet update landed before the crash")
	w.settle()
	assert.False(t, w.exists(&corev1.Pod{}, pod1), "the StatefulSet controller removed pod 1")
	assert.True(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)))
	return w
}

func TestCrashAfterScaleLeavesBuggyStuck(t *testing.T) {
	w := crashAfterScale(t, Buggy)
	assert.Equal(t, StatusOngoing, w.rack().PodLastOperation.Status, "Finalizing was lost with the crash")

	restarted := w.reconciler(Buggy, w.store)
	for i := 0; i < 40; i++ { // 200 s of logical time, past every delay
		err := w.tick(restarted)
		require.Error(t, err, "tick %d", i)
		assert.Contains(t, err.Error(), "Failed to get last pod "+pod1)
		assert.True(t, apierrors.IsNotFound(err), "the NotFound stays visible to callers: %v", err)
		if i == 10 {
			w.setNodesPerRacks(2)
		}
	}
	assert.True(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)), "the PVC of the removed pod is never deleted")
	rs := w.rack()
	assert.Equal(t, ActionScaleDown, rs.CassandraLastAction.Name, "the scale back to 2 is never served")
	assert.NotEqual(t, StatusDone, rs.CassandraLastAction.Status)
	assert.Equal(t, StatusOngoing, rs.PodLastOperation.Status)
	assert.Equal(t, int32(1), *w.statefulSet().Spec.Replicas)
}

func TestCrashAfterScaleRecoversWithUpstreamFix(t *testing.T) {
	w := crashAfterScale(t, UpstreamFix)
	assert.Equal(t, StatusFinalizing, w.rack().PodLastOperation.Status, "Finalizing was written before the StatefulSet update")

	restarted := w.reconciler(UpstreamFix, w.store)
	w.driveUntil(restarted, 10, "ScaleDown done", func() bool {
		return w.rack().CassandraLastAction.Status == StatusDone
	})
	assert.False(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)))
	rs := w.rack()
	assert.Equal(t, ActionScaleDown, rs.CassandraLastAction.Name)
	assert.Equal(t, StatusDone, rs.PodLastOperation.Status)

	w.setNodesPerRacks(2)
	w.driveUntil(restarted, 10, "ScaleUp done", func() bool {
		la := w.rack().CassandraLastAction
		return la.Name == ActionScaleUp && la.Status == StatusDone
	})
	assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas)
}

func TestDecommissionRetriedWhenNodeStaysNormal(t *testing.T) {
	w := newWorld(t, 2)
	r := w.reconciler(Buggy, w.store)
	w.bootstrap(r)
	w.setNodesPerRacks(1)
	w.mustReconcile(r)
	require.Equal(t, []string{pod1}, w.nodes.decommissions)

	// The decommission never took: the node is NORMAL again.
	w.nodes.modes[pod1] = ModeNormal
	w.clock.Advance(model.FromDuration(DecommissionRetryDelay - time.Second))
	w.mustReconcile(r)
	assert.Equal(t, StatusOngoing, w.rack().PodLastOperation.Status, "too early to retry")

	w.clock.Advance(model.FromDuration(time.Second))
	w.mustReconcile(r)
	assert.Equal(t, StatusToDo, w.rack().PodLastOperation.Status)
	w.mustReconcile(r)
	assert.Equal(t, []string{pod1, pod1}, w.nodes.decommissions, "the decommission is started again")
	assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas, "no scale before the node has left")
}

func TestDeletionDeletesPVCsAndReleasesTheCR(t *testing.T) {
	w := newWorld(t, 2)
	r := w.reconciler(UpstreamFix, w.store)
	w.bootstrap(r)
	require.NoError(t, w.store.Delete(w.ctx, w.cluster()))
	require.True(t, w.exists(&CassandraCluster{}, testCluster), "the finalizer holds the CR")

	res, err := w.reconcile(r)
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter)
	assert.False(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod0)))
	assert.False(t, w.exists(&corev1.PersistentVolumeClaim{}, PVCName(pod1)))
	assert.False(t, w.exists(&CassandraCluster{}, testCluster))

	res, err = w.reconcile(r)
	require.NoError(t, err, "a CR that is gone is done")
	assert.Zero(t, res)
}

func TestNewReconcilerRejectsIncompleteOptions(t *testing.T) {
	w := newWorld(t, 1)
	assert.Panics(t, func() { NewReconciler(w.store, Options{Variant: Buggy, Nodes: w.nodes}) }, "Now is required")
	assert.Panics(t, func() { NewReconciler(w.store, Options{Variant: Buggy, Now: w.clock.Wall}) }, "Nodes is required")
	assert.Panics(t, func() { NewReconciler(w.store, Options{Variant: "no-such-variant", Nodes: w.nodes, Now: w.clock.Wall}) })
	assert.NotPanics(t, func() { w.reconciler(UpstreamFix, w.store) })
}

// The two tests below pin down behaviour that follows from the state machine
// as targets.md describes it and that the explorer should report: they are
// not the seed bug, and they are not fixed by the upstream fix.

// A crash after the upstream fix's early status write but before the
// StatefulSet update leaves Finalizing on record with pod 1 still running;
// Finalizing then waits for the pod to go, and "break" with the last action
// still ToDo keeps the StatefulSet from ever being scaled.
func TestKnownGapUpstreamFixCrashBetweenStatusWriteAndScale(t *testing.T) {
	w := newWorld(t, 2)
	r := w.reconciler(UpstreamFix, w.store)
	w.bootstrap(r)
	w.setNodesPerRacks(1)
	w.mustReconcile(r)
	w.nodes.step()
	w.reconcileCrashing(w.reconciler(UpstreamFix, crashingClient(w.store, isCluster, true)))
	require.Equal(t, StatusFinalizing, w.rack().PodLastOperation.Status)

	restarted := w.reconciler(UpstreamFix, w.store)
	for i := 0; i < 40; i++ {
		require.NoError(t, w.tick(restarted), "tick %d", i)
	}
	assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas, "the StatefulSet is never scaled down")
	assert.Equal(t, StatusToDo, w.rack().CassandraLastAction.Status)
	assert.Equal(t, StatusFinalizing, w.rack().PodLastOperation.Status)
}

// A crash after the decommission was started but before the deferred status
// write forgets the whole scale-down while the node leaves; the restarted
// operator detects it again, and ToDo then finds the node LEAVING or
// DECOMMISSIONED and only waits, on both variants.
func TestKnownGapCrashAfterDecommissionStart(t *testing.T) {
	for _, v := range []Variant{Buggy, UpstreamFix} {
		t.Run(string(v), func(t *testing.T) {
			w := newWorld(t, 2)
			r := w.reconciler(v, w.store)
			w.bootstrap(r)
			w.setNodesPerRacks(1)
			w.reconcileCrashing(w.reconciler(v, crashingClient(w.store, isCluster, false)))
			require.Equal(t, []string{pod1}, w.nodes.decommissions)
			require.Equal(t, ActionInitializing, w.rack().CassandraLastAction.Name,
				"the scale-down and its Ongoing decommission died with the crash")

			restarted := w.reconciler(v, w.store)
			for i := 0; i < 40; i++ {
				require.NoError(t, w.tick(restarted), "tick %d", i)
			}
			assert.Equal(t, ModeDecommissioned, w.nodes.mode(pod1))
			assert.Equal(t, int32(2), *w.statefulSet().Spec.Replicas, "the StatefulSet is never scaled down")
			assert.Equal(t, StatusToDo, w.rack().PodLastOperation.Status)
		})
	}
}
