package kvstore

// The scenario of the walk-through in docs/user-guide.md (steps 1 to 5): it
// lives in a non-test file so that both the tests (kvstore_test.go) and the
// module's own command line (cmd/kvcheck, explore.Main) build it.

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// Step 1 of docs/user-guide.md: register your types: client-go's scheme plus your CRD types.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Step 2 and 3: the reconciler factory and the watches, as your manager's
// builder wires them: For the KVStore, Owns its StatefulSet and Service,
// Watches its pods through their label.
func controller(v Variant) simulator.ControllerSpec {
	return simulator.ControllerSpec{
		Name: "kvstore-operator",
		For:  &KVStore{},
		Owns: []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}},
		Watches: []simulator.Watch{{
			Type: &corev1.Pod{},
			Map: func(obj client.Object) []reconcile.Request {
				name := obj.GetLabels()[LabelName]
				if name == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
			},
		}},
		// Called at start and after every crash: each incarnation starts
		// with empty memory, as a restarted operator pod does.
		New: func(c client.Client) reconcile.Reconciler { return New(c, v) },
	}
}

const (
	ns   = "default"
	name = "kv"
)

var key = client.ObjectKey{Namespace: ns, Name: name}

// Step 4: a workload with wait conditions. Do is one user action; the
// workload moves on once Until holds on ground truth.
func workload() []simulator.WorkloadStep {
	return []simulator.WorkloadStep{
		{Name: "create kv with 2 replicas", Do: create(2), Until: ready(2)},
		{Name: "scale kv to 1", Do: scale(1), Until: memberGone(1)},
		{Name: "scale kv to 3", Do: scale(3), Until: ready(3)},
	}
}

func create(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &KVStore{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       KVStoreSpec{Replicas: replicas, Storage: "1Gi"},
		})
	}
}

// scale does what `kubectl scale` does: read the latest, write replicas. A
// conflict is retried by the workload at a later step.
func scale(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var kv KVStore
		if err := c.Get(ctx, key, &kv); err != nil {
			return err
		}
		kv.Spec.Replicas = replicas
		return c.Update(ctx, &kv)
	}
}

// ready: the KVStore reports phase Ready with n ready replicas. The
// condition is asked after every change of a KVStore, so it reads the
// stored revision in place (SharedGet: no copy; it must not modify it).
func ready(n int32) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		kv, err := simulator.SharedGet[*KVStore](ctx, r, key)
		if err != nil {
			return false
		}
		return kv.Status.Phase == PhaseReady && kv.Status.ReadyReplicas == n
	}
}

// KVStore objects are copied on every read through their generated copy
// methods called directly, not through reflection, and so is their status
// on every status write.
func init() {
	simulator.RegisterStatusCopier(func(kv *KVStore) *KVStoreStatus { return &kv.Status })
}

// memberGone: member i's pod and PVC no longer exist.
func memberGone(i int) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		err1 := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: PodName(name, i)}, &corev1.Pod{})
		err2 := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: PVCName(name, i)}, &corev1.PersistentVolumeClaim{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
	}
}

// Step 5: properties. Ground truth (properties.State) is rebuilt from the
// history; a property reads it, never a cache.
const (
	PropNoDelete = "NoDeleteOfLive(member PVC)"
	PropConverge = "EventuallyConverges(members match spec)"
)

// committed is the KVStore the store holds: what the user asked for.
// Objects are looked up by Go type: a misspelt type does not compile.
func committed(s *properties.State, namespace, kvName string) (*KVStore, bool) {
	kv, ok := properties.Get[*KVStore](s, namespace, kvName)
	if !ok {
		return nil, false
	}
	return kv, kv.DeletionTimestamp == nil
}

// statefulSetOf is this KVStore instance's StatefulSet: owned by its UID, so
// after a delete and a re-create under the same name the old instance's
// StatefulSet (still there until the garbage collector removes it) is not
// taken for the new one's.
func statefulSetOf(s *properties.State, kv *KVStore) (*appsv1.StatefulSet, bool) {
	sts, ok := properties.Get[*appsv1.StatefulSet](s, kv.Namespace, kv.Name)
	if !ok || !properties.OwnedBy(sts, kv) {
		return nil, false
	}
	return sts, true
}

func props() []properties.Property {
	return []properties.Property{
		// A member's disk is live while the committed KVStore still wants
		// that member, whether or not its pod runs right now.
		properties.NoDeleteOfLive(PropNoDelete,
			func(obj runtime.Object) bool {
				pvc, ok := obj.(*corev1.PersistentVolumeClaim)
				return ok && pvc.Labels[LabelName] != "" && strings.HasPrefix(pvc.Name, VolumeName+"-")
			},
			func(s *properties.State, obj runtime.Object) (bool, string) {
				pvc := obj.(*corev1.PersistentVolumeClaim)
				kv, ok := committed(s, pvc.Namespace, pvc.Labels[LabelName])
				if !ok {
					return false, ""
				}
				ord, ok := Ordinal(kv.Name, pvc.Name)
				if !ok || int32(ord) >= kv.Spec.Replicas {
					return false, ""
				}
				return true, fmt.Sprintf("member %d is wanted: the committed KVStore %s/%s has spec.replicas=%d at rev %s", ord, kv.Namespace, kv.Name, kv.Spec.Replicas, kv.ResourceVersion)
			}),
		properties.EventuallyConverges(PropConverge, converged),
		properties.NoReconcilePanic(),
		properties.NoEndlessReconcile(),
	}
}

// converged: every KVStore has spec.replicas ready pods, as many live
// member PVCs, a StatefulSet asking for spec.replicas, and says so in its
// status.
func converged(s *properties.State) (bool, string) {
	for _, kv := range properties.List[*KVStore](s, "", nil) {
		if kv.DeletionTimestamp != nil {
			continue
		}
		want := kv.Spec.Replicas
		var ready, pvcs int32
		sts, ok := statefulSetOf(s, kv)
		for _, p := range properties.List[*corev1.Pod](s, kv.Namespace, nil) {
			if ok && properties.OwnedBy(p, sts) && podReady(p) {
				ready++
			}
		}
		for _, p := range properties.List[*corev1.PersistentVolumeClaim](s, kv.Namespace, nil) {
			if p.Labels[LabelName] == kv.Name && p.DeletionTimestamp == nil {
				pvcs++
			}
		}
		stsReplicas := int32(-1)
		if ok && sts.Spec.Replicas != nil {
			stsReplicas = *sts.Spec.Replicas
		}
		if ready != want || pvcs != want || stsReplicas != want || kv.Status.ReadyReplicas != want || kv.Status.Phase != PhaseReady {
			return false, fmt.Sprintf("%s/%s wants %d members: %d ready pods, %d live PVCs, StatefulSet replicas %d, status %d ready, phase %q",
				kv.Namespace, kv.Name, want, ready, pvcs, stsReplicas, kv.Status.ReadyReplicas, kv.Status.Phase)
		}
	}
	return true, ""
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// The scenario: two apiservers whose KVStore caches can lag, one crash,
// one paused watch cache, one pod eviction.
func Scenario(v Variant) *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "kvstore/" + string(v),
		Description: "kvstore (" + string(v) + "): scale 2 -> 1 -> 3 with a stale apiserver, a crash and an eviction",
		Scheme:      scheme(),
		APIServers:  2,
		Controllers: []simulator.ControllerSpec{controller(v)},
		Workload:    workload(),
		Faults:      model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1},
		Properties:  props(),
		// The reconciler only passes resourceVersions back and names them
		// in messages: the search may merge states that differ in them
		// alone.
		OpaqueResourceVersions: true,
	}
}

// Scenarios are both variants' scenarios, kvstore/correct and
// kvstore/broken: what cmd/kvcheck passes to explore.Main.
func Scenarios() []*simulator.Scenario {
	return []*simulator.Scenario{Scenario(Correct), Scenario(Broken)}
}
