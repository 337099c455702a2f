package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

const (
	testNS = "ns"
	testCR = "zk"
	// initialRV is the resourceVersion the fake client gives every object
	// it is built with.
	initialRV = "999"
)

// ---- in-memory ZooKeeper ----

type znode struct {
	data    string
	version int32
}

// fakeEnsemble is a ZooKeeper ensemble in memory. Every call of every client
// is appended to journal, shared with the API-call recorder, so tests can
// assert the order of ZooKeeper writes against Kubernetes writes.
type fakeEnsemble struct {
	reachable bool
	nodes     map[string]*znode
	journal   *[]string
	clients   int
}

func newFakeEnsemble(journal *[]string) *fakeEnsemble {
	return &fakeEnsemble{reachable: true, nodes: map[string]*znode{}, journal: journal}
}

func (e *fakeEnsemble) factory() ZookeeperClient {
	e.clients++
	return &fakeZKClient{ensemble: e}
}

func (e *fakeEnsemble) record(format string, args ...any) {
	*e.journal = append(*e.journal, fmt.Sprintf(format, args...))
}

type fakeZKClient struct {
	ensemble  *fakeEnsemble
	connected bool
}

func (c *fakeZKClient) Connect(_ context.Context, address string) error {
	c.ensemble.record("zk connect %s", address)
	if !c.ensemble.reachable {
		return errors.New("no member reachable")
	}
	c.connected = true
	return nil
}

func (c *fakeZKClient) CreateNode(_ context.Context, path, data string) error {
	c.ensemble.record("zk create %s %s", path, data)
	if !c.connected {
		return errors.New("not connected")
	}
	if _, ok := c.ensemble.nodes[path]; ok {
		return fmt.Errorf("create %s: %w", path, ErrNodeExists)
	}
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			if _, ok := c.ensemble.nodes[path[:i]]; !ok {
				c.ensemble.nodes[path[:i]] = &znode{}
			}
		}
	}
	c.ensemble.nodes[path] = &znode{data: data}
	return nil
}

func (c *fakeZKClient) NodeExists(_ context.Context, path string) (int32, error) {
	c.ensemble.record("zk exists %s", path)
	if !c.connected {
		return 0, errors.New("not connected")
	}
	n, ok := c.ensemble.nodes[path]
	if !ok {
		return 0, fmt.Errorf("exists %s: %w", path, ErrNoNode)
	}
	return n.version, nil
}

func (c *fakeZKClient) UpdateNode(_ context.Context, path, data string, version int32) error {
	c.ensemble.record("zk update %s %s", path, data)
	if !c.connected {
		return errors.New("not connected")
	}
	n, ok := c.ensemble.nodes[path]
	if !ok {
		return fmt.Errorf("update %s: %w", path, ErrNoNode)
	}
	if n.version != version {
		return fmt.Errorf("update %s at version %d, node is at %d: %w", path, version, n.version, ErrBadVersion)
	}
	n.data = data
	n.version++
	return nil
}

func (c *fakeZKClient) Close() {
	c.ensemble.record("zk close")
	c.connected = false
}

// ---- harness ----

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, AddToScheme(s))
	return s
}

// harness runs one reconciler over a fake client. journal records the
// ZooKeeper calls and every Kubernetes write, in order.
type harness struct {
	t        *testing.T
	client   client.Client // the store, read directly (never through the interceptor)
	ensemble *fakeEnsemble
	journal  []string
	clock    *model.Clock
	rec      *Reconciler
}

type harnessOptions struct {
	variant Variant
	objects []client.Object
	// getCR, when set, serves every Get of the ZookeeperCluster instead of
	// the store: the stale apiserver of the bug report.
	getCR func() *ZookeeperCluster
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, clock: &model.Clock{}}
	h.ensemble = newFakeEnsemble(&h.journal)
	h.client = fake.NewClientBuilder().
		WithScheme(newScheme(t)).
		WithObjects(o.objects...).
		WithStatusSubresource(&ZookeeperCluster{}, &appsv1.StatefulSet{}).
		Build()
	kind := func(obj client.Object) string { return reflect.TypeOf(obj).Elem().Name() }
	funcs := interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cr, ok := obj.(*ZookeeperCluster); ok && o.getCR != nil {
				o.getCR().DeepCopyInto(cr)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			h.journal = append(h.journal, "create "+kind(obj)+" "+obj.GetName())
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			h.journal = append(h.journal, "update "+kind(obj)+" "+obj.GetName())
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			h.journal = append(h.journal, "delete "+kind(obj)+" "+obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			h.journal = append(h.journal, "update "+kind(obj)+"/"+sub+" "+obj.GetName())
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
	wrapped := interceptor.NewClient(h.client.(client.WithWatch), funcs)
	h.rec = NewReconciler(wrapped, Options{Variant: o.variant, NewZookeeperClient: h.ensemble.factory, Now: h.clock.Wall})
	return h
}

func (h *harness) reconcile() (reconcile.Result, error) {
	h.t.Helper()
	return h.rec.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: testNS, Name: testCR}})
}

func (h *harness) get(obj client.Object, name string) error {
	return h.client.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: name}, obj)
}

func (h *harness) mustGet(obj client.Object, name string) {
	h.t.Helper()
	require.NoError(h.t, h.get(obj, name), "get %T %s", obj, name)
}

func (h *harness) cr() *ZookeeperCluster {
	h.t.Helper()
	cr := &ZookeeperCluster{}
	h.mustGet(cr, testCR)
	return cr
}

func (h *harness) statefulSet() *appsv1.StatefulSet {
	h.t.Helper()
	sts := &appsv1.StatefulSet{}
	h.mustGet(sts, StatefulSetName(testCR))
	return sts
}

func (h *harness) pvcNames() []string {
	h.t.Helper()
	list := &corev1.PersistentVolumeClaimList{}
	require.NoError(h.t, h.client.List(context.Background(), list, client.InNamespace(testNS)))
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// zkCalls returns the journal entries of ZooKeeper calls, in order.
func (h *harness) zkCalls() []string {
	var calls []string
	for _, j := range h.journal {
		if strings.HasPrefix(j, "zk ") {
			calls = append(calls, j)
		}
	}
	return calls
}

// ---- fixtures ----

// newCR returns a ZookeeperCluster with every default already applied, so
// that a reconcile goes past the defaulting step.
func newCR(replicas int32, policy VolumeReclaimPolicy) *ZookeeperCluster {
	cr := &ZookeeperCluster{
		ObjectMeta: metav1.ObjectMeta{Name: testCR, Namespace: testNS, UID: "uid-zk"},
		Spec: ZookeeperClusterSpec{
			Replicas:    replicas,
			Persistence: &Persistence{ReclaimPolicy: policy},
		},
	}
	cr.WithDefaults()
	return cr
}

func withFinalizer(cr *ZookeeperCluster) *ZookeeperCluster {
	cr.Finalizers = append(cr.Finalizers, PVCFinalizer)
	return cr
}

func withReady(cr *ZookeeperCluster, ready int32) *ZookeeperCluster {
	cr.Status.Replicas = ready
	cr.Status.ReadyReplicas = ready
	return cr
}

func newPVC(cr string, ordinal int) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		Name: PVCName(cr, ordinal), Namespace: testNS, Labels: Labels(cr), UID: types.UID(fmt.Sprintf("uid-pvc-%s-%d", cr, ordinal)),
	}}
}

func newPod(ordinal int, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: PodName(testCR, ordinal), Namespace: testNS, Labels: Labels(testCR)},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: PVCTemplateName, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(testCR, ordinal)},
		}}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

// newStatefulSet returns the StatefulSet a previous reconcile of cr would
// have left, scaled to replicas with all of them ready, labelled
// owner-rv=ownerRV when ownerRV is not empty.
func newStatefulSet(t *testing.T, cr *ZookeeperCluster, replicas int32, ownerRV string) *appsv1.StatefulSet {
	t.Helper()
	sts := desiredStatefulSet(cr)
	sts.Spec.Replicas = &replicas
	if ownerRV != "" {
		setOwnerRV(sts, ownerRV)
	}
	require.NoError(t, controllerutil.SetControllerReference(cr, sts, newScheme(t)))
	sts.Status = appsv1.StatefulSetStatus{Replicas: replicas, ReadyReplicas: replicas}
	return sts
}

func assertOwnedChild(t *testing.T, obj client.Object, cr *ZookeeperCluster) {
	t.Helper()
	assert.Equal(t, Labels(cr.Name), obj.GetLabels(), "%T %s labels", obj, obj.GetName())
	refs := obj.GetOwnerReferences()
	require.Len(t, refs, 1, "%T %s owner references", obj, obj.GetName())
	assert.Equal(t, "ZookeeperCluster", refs[0].Kind)
	assert.Equal(t, GroupVersion.String(), refs[0].APIVersion)
	assert.Equal(t, cr.Name, refs[0].Name)
	assert.Equal(t, cr.UID, refs[0].UID)
	require.NotNil(t, refs[0].Controller)
	assert.True(t, *refs[0].Controller, "%T %s must be controlled by the CR", obj, obj.GetName())
}

// ---- tests ----

func TestDefaultsAreWrittenWithAnUpdateAndRequeue(t *testing.T) {
	bare := &ZookeeperCluster{ObjectMeta: metav1.ObjectMeta{Name: testCR, Namespace: testNS}}
	h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{bare}})

	res, err := h.reconcile()
	require.NoError(t, err)
	assert.Equal(t, reconcile.Result{Requeue: true}, res)
	assert.Equal(t, []string{"update ZookeeperCluster zk"}, h.journal, "defaulting must be one Update and nothing else")

	cr := h.cr()
	assert.Equal(t, DefaultReplicas, cr.Spec.Replicas)
	assert.Equal(t, DefaultImage, cr.Spec.Image)
	require.NotNil(t, cr.Spec.Persistence)
	assert.Equal(t, VolumeReclaimPolicyRetain, cr.Spec.Persistence.ReclaimPolicy)
	assert.Equal(t, DefaultVolumeSize, cr.Spec.Persistence.VolumeSize)
	assert.True(t, apierrors.IsNotFound(h.get(&appsv1.StatefulSet{}, StatefulSetName(testCR))), "no child may be created in the defaulting reconcile")
}

func TestMissingCRIsNotAnError(t *testing.T) {
	h := newHarness(t, harnessOptions{variant: Fixed})
	res, err := h.reconcile()
	require.NoError(t, err)
	assert.Equal(t, reconcile.Result{}, res)
	assert.Empty(t, h.journal)
}

func TestFirstReconcileCreatesEveryChild(t *testing.T) {
	for _, variant := range Variants() {
		t.Run(string(variant), func(t *testing.T) {
			h := newHarness(t, harnessOptions{variant: variant, objects: []client.Object{newCR(3, VolumeReclaimPolicyRetain)}})
			res, err := h.reconcile()
			require.NoError(t, err)
			assert.Equal(t, reconcile.Result{RequeueAfter: 30 * time.Second}, res)
			assert.Equal(t, []string{
				"create ConfigMap zk-configmap",
				"create StatefulSet zk",
				"create Service zk-client",
				"create Service zk-headless",
				"create Service zk-admin-server",
				"create PodDisruptionBudget zk",
				"update ZookeeperCluster/status zk",
			}, h.journal)

			cr := h.cr()
			sts := h.statefulSet()
			stsLabels := sts.DeepCopy()
			if variant == Buggy {
				assert.NotContains(t, sts.Labels, OwnerRVLabel)
			} else {
				assert.Equal(t, initialRV, sts.Labels[OwnerRVLabel], "the fix labels the StatefulSet with the CR's resourceVersion at creation")
				delete(stsLabels.Labels, OwnerRVLabel)
			}
			assertOwnedChild(t, stsLabels, cr)
			require.NotNil(t, sts.Spec.Replicas)
			assert.Equal(t, int32(3), *sts.Spec.Replicas)
			assert.Equal(t, appsv1.OrderedReadyPodManagement, sts.Spec.PodManagementPolicy)
			assert.Equal(t, "zk-headless", sts.Spec.ServiceName)
			assert.Equal(t, Labels(testCR), sts.Spec.Selector.MatchLabels)
			assert.Equal(t, Labels(testCR), sts.Spec.Template.Labels)
			require.Len(t, sts.Spec.Template.Spec.Containers, 1)
			assert.Equal(t, "zookeeper", sts.Spec.Template.Spec.Containers[0].Name)
			assert.Equal(t, DefaultImage, sts.Spec.Template.Spec.Containers[0].Image)
			require.Len(t, sts.Spec.VolumeClaimTemplates, 1)
			vct := sts.Spec.VolumeClaimTemplates[0]
			assert.Equal(t, "data", vct.Name)
			assert.Equal(t, Labels(testCR), vct.Labels)
			assert.True(t, vct.Spec.Resources.Requests.Storage().Equal(resource.MustParse("20Gi")), "request %v", vct.Spec.Resources.Requests.Storage())

			cm := &corev1.ConfigMap{}
			h.mustGet(cm, "zk-configmap")
			assertOwnedChild(t, cm, cr)
			assert.Contains(t, cm.Data["env.sh"], "zk-headless.ns.svc.cluster.local")

			for _, name := range []string{"zk-client", "zk-headless", "zk-admin-server"} {
				svc := &corev1.Service{}
				h.mustGet(svc, name)
				assertOwnedChild(t, svc, cr)
				assert.Equal(t, Labels(testCR), svc.Spec.Selector)
			}
			headless := &corev1.Service{}
			h.mustGet(headless, "zk-headless")
			assert.Equal(t, corev1.ClusterIPNone, headless.Spec.ClusterIP)

			pdb := &policyv1.PodDisruptionBudget{}
			h.mustGet(pdb, "zk")
			assertOwnedChild(t, pdb, cr)
			assert.Equal(t, Labels(testCR), pdb.Spec.Selector.MatchLabels)

			assert.Empty(t, cr.Finalizers, "Retain must not add the PVC finalizer")
			pods := cr.Status.Condition(ClusterConditionPodsReady)
			require.NotNil(t, pods)
			assert.Equal(t, corev1.ConditionFalse, pods.Status)
			assert.Equal(t, model.Epoch.Format(time.RFC3339), pods.LastTransitionTime)
			assert.False(t, cr.Status.MetaRootCreated)
			assert.Empty(t, h.zkCalls(), "nothing talks to ZooKeeper before the ensemble is ready")
		})
	}
}

func TestReadyEnsembleGetsStatusCopiedAndMetaRootCreated(t *testing.T) {
	cr := newCR(3, VolumeReclaimPolicyRetain)
	objects := []client.Object{cr, newStatefulSet(t, cr, 3, ""), newPod(2, false), newPod(0, true), newPod(1, true)}
	h := newHarness(t, harnessOptions{variant: Buggy, objects: objects})
	h.clock.AdvanceTo(model.FromDuration(90 * time.Second))

	_, err := h.reconcile()
	require.NoError(t, err)

	got := h.cr()
	assert.Equal(t, int32(3), got.Status.ReadyReplicas, "readyReplicas is copied from the StatefulSet status")
	assert.Equal(t, []string{"zk-0", "zk-1"}, got.Status.Members.Ready)
	assert.Equal(t, []string{"zk-2"}, got.Status.Members.Unready)
	assert.True(t, got.Status.MetaRootCreated)
	require.Contains(t, h.ensemble.nodes, "/zookeeper-operator/zk")
	assert.Equal(t, "CLUSTER_SIZE=3", h.ensemble.nodes["/zookeeper-operator/zk"].data)
	assert.Contains(t, h.ensemble.nodes, "/zookeeper-operator", "CreateNode creates missing parents")
	ready := got.Status.Condition(ClusterConditionPodsReady)
	require.NotNil(t, ready)
	assert.Equal(t, corev1.ConditionTrue, ready.Status)
	assert.Equal(t, "2026-01-01T00:01:30Z", ready.LastTransitionTime, "timestamps come from the logical clock")
	upgrading := got.Status.Condition(ClusterConditionUpgrading)
	require.NotNil(t, upgrading)
	assert.Equal(t, corev1.ConditionFalse, upgrading.Status)
	assert.Equal(t, DefaultImage, got.Status.CurrentImage)

	// A second reconcile with the meta root already recorded does not
	// touch ZooKeeper, and a steady condition keeps its transition time.
	h.journal = nil
	h.clock.AdvanceTo(model.FromDuration(120 * time.Second))
	_, err = h.reconcile()
	require.NoError(t, err)
	assert.Empty(t, h.zkCalls())
	assert.Equal(t, "2026-01-01T00:01:30Z", h.cr().Status.Condition(ClusterConditionPodsReady).LastTransitionTime)
}

func TestMetaRootAlreadyPresentCountsAsCreated(t *testing.T) {
	cr := newCR(1, VolumeReclaimPolicyRetain)
	h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{cr, newStatefulSet(t, cr, 1, "")}})
	h.ensemble.nodes["/zookeeper-operator/zk"] = &znode{data: "CLUSTER_SIZE=1"}
	_, err := h.reconcile()
	require.NoError(t, err)
	assert.True(t, h.cr().Status.MetaRootCreated)
}

func TestUnreachableEnsembleStopsMetaRootCreation(t *testing.T) {
	cr := newCR(1, VolumeReclaimPolicyRetain)
	h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{cr, newStatefulSet(t, cr, 1, "")}})
	h.ensemble.reachable = false
	_, err := h.reconcile()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "create cluster metadata")
	assert.False(t, h.cr().Status.MetaRootCreated)
}

func TestCleanupOrphanPVCs(t *testing.T) {
	cases := []struct {
		name        string
		policy      VolumeReclaimPolicy
		replicas    int32
		ready       int32
		pvcs        int
		wantPVCs    []string
		wantDeletes []string
	}{
		{
			name: "ready ensemble deletes ordinals at or above replicas", policy: VolumeReclaimPolicyDelete,
			replicas: 2, ready: 2, pvcs: 4,
			wantPVCs:    []string{"data-other-0", "data-other-3", "data-zk-0", "data-zk-1"},
			wantDeletes: []string{"delete PersistentVolumeClaim data-zk-2", "delete PersistentVolumeClaim data-zk-3"},
		},
		{
			name: "not all replicas ready deletes nothing", policy: VolumeReclaimPolicyDelete,
			replicas: 2, ready: 1, pvcs: 4,
			wantPVCs: []string{"data-other-0", "data-other-3", "data-zk-0", "data-zk-1", "data-zk-2", "data-zk-3"},
		},
		{
			name: "retain deletes nothing", policy: VolumeReclaimPolicyRetain,
			replicas: 2, ready: 2, pvcs: 4,
			wantPVCs: []string{"data-other-0", "data-other-3", "data-zk-0", "data-zk-1", "data-zk-2", "data-zk-3"},
		},
		{
			name: "no more PVCs than replicas deletes nothing", policy: VolumeReclaimPolicyDelete,
			replicas: 2, ready: 2, pvcs: 2,
			wantPVCs: []string{"data-other-0", "data-other-3", "data-zk-0", "data-zk-1"},
		},
	}
	for _, variant := range Variants() {
		for _, tc := range cases {
			t.Run(string(variant)+"/"+tc.name, func(t *testing.T) {
				cr := withReady(newCR(tc.replicas, tc.policy), tc.ready)
				objects := []client.Object{cr, newStatefulSet(t, cr, tc.replicas, ""), newPVC("other", 0), newPVC("other", 3)}
				for i := 0; i < tc.pvcs; i++ {
					objects = append(objects, newPVC(testCR, i))
				}
				h := newHarness(t, harnessOptions{variant: variant, objects: objects})
				_, err := h.reconcile()
				require.NoError(t, err)
				assert.Equal(t, tc.wantPVCs, h.pvcNames())
				var deletes []string
				for _, j := range h.journal {
					if strings.HasPrefix(j, "delete ") {
						deletes = append(deletes, j)
					}
				}
				assert.Equal(t, tc.wantDeletes, deletes)
				got := h.cr()
				if tc.policy == VolumeReclaimPolicyDelete {
					assert.Equal(t, []string{PVCFinalizer}, got.Finalizers, "reclaimPolicy Delete adds the finalizer")
				} else {
					assert.Empty(t, got.Finalizers)
				}
				if variant == Fixed && len(tc.wantDeletes) > 0 {
					assert.Contains(t, h.journal, "update StatefulSet zk", "the fixed cleanup fences on the StatefulSet before deleting")
					assert.Less(t, indexOf(h.journal, "update StatefulSet zk"), indexOf(h.journal, tc.wantDeletes[0]))
				}
			})
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestFinalizerAddedBeforeCleanup(t *testing.T) {
	cr := withReady(newCR(1, VolumeReclaimPolicyDelete), 1)
	h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{cr, newStatefulSet(t, cr, 1, ""), newPVC(testCR, 0), newPVC(testCR, 1)}})
	_, err := h.reconcile()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(h.journal), 2)
	assert.Equal(t, []string{"update ZookeeperCluster zk", "delete PersistentVolumeClaim data-zk-1"}, h.journal[:2])
	assert.Equal(t, []string{PVCFinalizer}, h.cr().Finalizers)
}

func TestDeletionDeletesEveryPVCAndRemovesTheFinalizer(t *testing.T) {
	for _, variant := range Variants() {
		t.Run(string(variant), func(t *testing.T) {
			cr := withFinalizer(withReady(newCR(2, VolumeReclaimPolicyDelete), 2))
			now := metav1.NewTime(model.Epoch)
			cr.DeletionTimestamp = &now
			h := newHarness(t, harnessOptions{variant: variant, objects: []client.Object{
				cr, newPVC(testCR, 0), newPVC(testCR, 1), newPVC(testCR, 2), newPVC("other", 0),
			}})
			_, err := h.reconcile()
			// As upstream, the reconcile carries on after removing the
			// finalizer and fails on the status write of the vanished CR.
			require.Error(t, err)
			assert.True(t, apierrors.IsNotFound(err), "got %v", err)
			assert.Equal(t, []string{"data-other-0"}, h.pvcNames())
			assert.True(t, apierrors.IsNotFound(h.get(&ZookeeperCluster{}, testCR)), "the CR goes once its last finalizer is removed")

			// The next reconcile sees no CR and is done.
			_, err = h.reconcile()
			require.NoError(t, err)
		})
	}
}

func TestReplicaChangeStoresClusterSizeThenUpdatesStatefulSet(t *testing.T) {
	for _, nodeExists := range []bool{true, false} {
		t.Run(fmt.Sprintf("znode exists %v", nodeExists), func(t *testing.T) {
			cr := newCR(5, VolumeReclaimPolicyRetain)
			sts := newStatefulSet(t, cr, 3, "")
			h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{cr, sts}})
			if nodeExists {
				h.ensemble.nodes["/zookeeper-operator/zk"] = &znode{data: "CLUSTER_SIZE=3", version: 4}
			}
			_, err := h.reconcile()
			require.NoError(t, err)

			write := "zk update /zookeeper-operator/zk CLUSTER_SIZE=5"
			if !nodeExists {
				write = "zk create /zookeeper-operator/zk CLUSTER_SIZE=5"
			}
			want := []string{
				"create ConfigMap zk-configmap",
				"zk connect zk-client.ns.svc.cluster.local:2181",
				"zk exists /zookeeper-operator/zk",
				write,
				"zk close",
				"update StatefulSet zk",
				"update ZookeeperCluster/status zk",
			}
			assert.Equal(t, want, h.journal[:len(want)])
			assert.Equal(t, "CLUSTER_SIZE=5", h.ensemble.nodes["/zookeeper-operator/zk"].data)
			if nodeExists {
				assert.Equal(t, int32(5), h.ensemble.nodes["/zookeeper-operator/zk"].version, "UpdateNode uses the version NodeExists returned")
			}
			assert.Equal(t, int32(5), *h.statefulSet().Spec.Replicas)
			assert.Equal(t, 1, h.ensemble.clients, "one ZooKeeper client per connection")
		})
	}
}

func TestUnreachableEnsembleLeavesStatefulSetAlone(t *testing.T) {
	cr := newCR(5, VolumeReclaimPolicyRetain)
	h := newHarness(t, harnessOptions{variant: Buggy, objects: []client.Object{cr, newStatefulSet(t, cr, 3, "")}})
	h.ensemble.reachable = false
	before := h.statefulSet()
	_, err := h.reconcile()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "zk-client.ns.svc.cluster.local:2181")
	after := h.statefulSet()
	assert.Equal(t, before.ResourceVersion, after.ResourceVersion)
	assert.Equal(t, int32(3), *after.Spec.Replicas)
}

func TestSteadyStateUpdateRaisesOwnerRVOnlyInFixVariants(t *testing.T) {
	for _, variant := range Variants() {
		t.Run(string(variant), func(t *testing.T) {
			cr := withReady(newCR(3, VolumeReclaimPolicyRetain), 3)
			cr.Status.MetaRootCreated = true
			h := newHarness(t, harnessOptions{variant: variant, objects: []client.Object{cr, newStatefulSet(t, cr, 3, "5")}})
			_, err := h.reconcile()
			require.NoError(t, err)
			assert.Empty(t, h.zkCalls(), "no replica change, no ZooKeeper write")
			assert.Contains(t, h.journal, "update StatefulSet zk", "the StatefulSet is updated on every reconcile, as upstream")
			if variant == Buggy {
				assert.Equal(t, "5", h.statefulSet().Labels[OwnerRVLabel])
			} else {
				assert.Equal(t, initialRV, h.statefulSet().Labels[OwnerRVLabel], "a newer CR raises the label in the same Update")
			}
		})
	}
}

// staleScenario is the bug report's situation: the store holds the truth
// (replicas 2, both ready, StatefulSet labelled with the CR's current
// resourceVersion, both members live), and every Get of the CR is served
// from a lagging apiserver that still shows replicas 1 == readyReplicas 1.
func staleScenario(t *testing.T, variant Variant) *harness {
	t.Helper()
	current := withFinalizer(withReady(newCR(2, VolumeReclaimPolicyDelete), 2))
	stale := withFinalizer(withReady(newCR(1, VolumeReclaimPolicyDelete), 1))
	stale.ResourceVersion = "990"
	current.Status.MetaRootCreated = true
	stale.Status.MetaRootCreated = true
	objects := []client.Object{
		current, newStatefulSet(t, current, 2, initialRV),
		newPod(0, true), newPod(1, true), newPVC(testCR, 0), newPVC(testCR, 1),
	}
	h := newHarness(t, harnessOptions{variant: variant, objects: objects, getCR: func() *ZookeeperCluster { return stale }})
	h.ensemble.nodes["/zookeeper-operator"] = &znode{}
	h.ensemble.nodes["/zookeeper-operator/zk"] = &znode{data: "CLUSTER_SIZE=2", version: 1}
	return h
}

func TestStaleCR(t *testing.T) {
	t.Run("buggy deletes the live member's PVC and scales the StatefulSet down", func(t *testing.T) {
		h := staleScenario(t, Buggy)
		_, err := h.reconcile()
		// The stale CR's own status write conflicts; the damage is done by then.
		require.Error(t, err)
		assert.True(t, apierrors.IsConflict(err), "got %v", err)
		assert.Equal(t, []string{"data-zk-0"}, h.pvcNames())
		assert.Equal(t, int32(1), *h.statefulSet().Spec.Replicas)
		assert.Contains(t, h.zkCalls(), "zk update /zookeeper-operator/zk CLUSTER_SIZE=1")
	})
	t.Run("upstream-fix refuses the StatefulSet write but still deletes the PVC", func(t *testing.T) {
		h := staleScenario(t, UpstreamFix)
		before := h.statefulSet()
		_, err := h.reconcile()
		require.Error(t, err)
		assert.Equal(t, "Staleness: cr.ResourceVersion 990 is smaller than labeledRV 999", err.Error())
		var stale *StalenessError
		require.ErrorAs(t, err, &stale)
		assert.Equal(t, StalenessError{CRResourceVersion: 990, LabeledResourceVersion: 999}, *stale)
		after := h.statefulSet()
		assert.Equal(t, before.ResourceVersion, after.ResourceVersion, "the StatefulSet is untouched")
		assert.Equal(t, int32(2), *after.Spec.Replicas)
		assert.Empty(t, h.zkCalls(), "no ZooKeeper write before the staleness check")
		// The upstream fix does not guard cleanupOrphanPVCs, which runs first.
		assert.Equal(t, []string{"data-zk-0"}, h.pvcNames())
	})
	t.Run("fixed refuses both writes", func(t *testing.T) {
		h := staleScenario(t, Fixed)
		before := h.statefulSet()
		_, err := h.reconcile()
		require.Error(t, err)
		assert.Equal(t, "Staleness: cr.ResourceVersion 990 is smaller than labeledRV 999", err.Error())
		assert.Equal(t, []string{"data-zk-0", "data-zk-1"}, h.pvcNames())
		assert.Equal(t, before.ResourceVersion, h.statefulSet().ResourceVersion)
		assert.Empty(t, h.zkCalls())
		for _, j := range h.journal {
			assert.False(t, strings.HasPrefix(j, "delete ") || strings.HasPrefix(j, "update "), "no write at all, got %q", j)
		}
	})
}

// TestFixedWaitsForTheStatefulSetAndThePod covers the guards of the fixed
// cleanup that do not depend on owner-rv: a CR whose status copy says the
// scale-down is done while the StatefulSet has not shrunk yet, or has shrunk
// but its pod is still there.
func TestFixedWaitsForTheStatefulSetAndThePod(t *testing.T) {
	cases := []struct {
		name        string
		stsReplicas int32
		pods        []int
	}{
		{"StatefulSet still asks for the member", 2, []int{0, 1}},
		{"pod of the member still exists", 1, []int{0, 1}},
	}
	for _, tc := range cases {
		for _, variant := range []Variant{Buggy, Fixed} {
			t.Run(tc.name+"/"+string(variant), func(t *testing.T) {
				cr := withFinalizer(withReady(newCR(1, VolumeReclaimPolicyDelete), 1))
				objects := []client.Object{cr, newStatefulSet(t, cr, tc.stsReplicas, ""), newPVC(testCR, 0), newPVC(testCR, 1)}
				for _, p := range tc.pods {
					objects = append(objects, newPod(p, true))
				}
				h := newHarness(t, harnessOptions{variant: variant, objects: objects})
				_, err := h.reconcile()
				require.NoError(t, err)
				if variant == Buggy {
					assert.Equal(t, []string{"data-zk-0"}, h.pvcNames(), "buggy trusts the CR alone")
				} else {
					assert.Equal(t, []string{"data-zk-0", "data-zk-1"}, h.pvcNames(), "fixed keeps a PVC the StatefulSet or a pod may still use")
				}
			})
		}
	}
}

func TestFixedFenceConflictLeavesPVCs(t *testing.T) {
	cr := withFinalizer(withReady(newCR(1, VolumeReclaimPolicyDelete), 1))
	objects := []client.Object{cr, newStatefulSet(t, cr, 1, ""), newPod(0, true), newPVC(testCR, 0), newPVC(testCR, 1)}
	h := newHarness(t, harnessOptions{variant: Fixed, objects: objects})
	// Swap the reconciler's client for one whose StatefulSet reads lag one
	// write behind, as an informer cache can.
	staleSts := h.statefulSet()
	fresh := h.statefulSet()
	fresh.Labels["bumped"] = "yes"
	require.NoError(t, h.client.Update(context.Background(), fresh))
	h.rec.client = interceptor.NewClient(h.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if sts, ok := obj.(*appsv1.StatefulSet); ok {
				staleSts.DeepCopyInto(sts)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	_, err := h.reconcile()
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "got %v", err)
	assert.Contains(t, err.Error(), "fence StatefulSet")
	assert.Equal(t, []string{"data-zk-0", "data-zk-1"}, h.pvcNames())
}

func TestNewReconcilerRejectsMisconfiguration(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	zk := func() ZookeeperClient { return nil }
	now := (&model.Clock{}).Wall
	assert.PanicsWithValue(t, `zookeeper.NewReconciler: unknown variant "fixd"; use one of "buggy", "upstream-fix", "fixed"`,
		func() { NewReconciler(c, Options{Variant: "fixd", NewZookeeperClient: zk, Now: now}) })
	assert.Panics(t, func() { NewReconciler(c, Options{Variant: Fixed, NewZookeeperClient: zk}) })
	assert.Panics(t, func() { NewReconciler(c, Options{Variant: Fixed, Now: now}) })
	assert.NotNil(t, NewReconciler(c, Options{Variant: Fixed, NewZookeeperClient: zk, Now: now}))
}
