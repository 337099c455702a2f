package zookeeper

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// The scenario's cluster: one ZookeeperCluster "zk" in namespace "default".
const (
	Namespace = "default"
	CRName    = "zk"
)

// Scheme returns a scheme with the built-in types and ZookeeperCluster.
func Scheme() *runtime.Scheme { return simulator.NewScheme(AddToScheme) }

var scheme = Scheme()

// Controller returns the controller under test for one variant, wired as
// the operator's manager wires it: For the CR, owning its StatefulSet and
// Services, and watching the member pods through their app label.
func Controller(v Variant) simulator.ControllerSpec {
	return simulator.ControllerSpec{
		Name: "zookeeper-operator",
		For:  &ZookeeperCluster{},
		Owns: []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}},
		Watches: []simulator.Watch{{Type: &corev1.Pod{}, Map: func(obj client.Object) []reconcile.Request {
			app := obj.GetLabels()[AppLabel]
			if app == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: app}}}
		}}},
		NewWithEnv: func(env *simulator.Env) reconcile.Reconciler {
			ens := env.World.ActorNamed(EnsembleActor).(*Ensemble)
			return NewReconciler(env.Client, Options{Variant: v, NewZookeeperClient: ens.NewClient, Now: env.Now})
		},
	}
}

// Scenario returns the seed bug's scenario for one variant: two apiservers;
// create with 2 replicas and reclaimPolicy Delete, wait until 2 members are
// ready; scale to 1, wait until member 1's pod and PVC are gone; scale to 2,
// wait until 2 are ready. Fault budget: one crash-restart, one paused watch
// cache (of ZookeeperClusters), one pod eviction.
func Scenario(v Variant) *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "zookeeper/" + string(v),
		Description: "zookeeper-operator (" + string(v) + "): scale 2 -> 1 -> 2 with a stale apiserver, a crash and an eviction",
		Scheme:      scheme,
		APIServers:  2,
		Controllers: []simulator.ControllerSpec{Controller(v)},
		Actors:      func(w *simulator.World) []simulator.Actor { return []simulator.Actor{NewEnsemble(w)} },
		Workload: []simulator.WorkloadStep{
			{Name: "create zk with 2 replicas", Do: createCR(2), Until: readyMembers(2)},
			{Name: "scale zk to 1", Do: scaleCR(1), Until: memberGone(1)},
			{Name: "scale zk to 2", Do: scaleCR(2), Until: readyMembers(2)},
		},
		Faults:     model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1},
		Properties: Properties(),
		// Two periodic resyncs (every 30 s) that change nothing show the
		// cluster has settled.
		QuietPeriod: model.FromDuration(61 * time.Second),
		// The guarded variants copy the ZookeeperCluster's resourceVersion
		// into the StatefulSet's owner-rv label and order the two; the
		// buggy one never looks at a resourceVersion.
		OpaqueResourceVersions: v == Buggy,
	}
}

func createCR(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &ZookeeperCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CRName},
			Spec:       ZookeeperClusterSpec{Replicas: replicas, Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyDelete}},
		})
	}
}

// scaleCR is what `kubectl scale` does: read the latest, write replicas.
func scaleCR(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var cr ZookeeperCluster
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CRName}, &cr); err != nil {
			return err
		}
		cr.Spec.Replicas = replicas
		return c.Update(ctx, &cr)
	}
}

func readyMembers(n int) func(context.Context, client.Reader) bool {
	// Built once: the condition is asked after every change of the pods.
	members := client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(Labels(CRName))}
	return func(ctx context.Context, r client.Reader) bool {
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(Namespace), members); err != nil {
			return false
		}
		ready := 0
		for i := range pods.Items {
			if simulator.PodServing(&pods.Items[i]) {
				ready++
			}
		}
		return ready == n
	}
}

func memberGone(ordinal int) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		err1 := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: PodName(CRName, ordinal)}, &corev1.Pod{})
		err2 := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: PVCName(CRName, ordinal)}, &corev1.PersistentVolumeClaim{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
	}
}

const crKind = "ZookeeperCluster"

// committedCR is the ZookeeperCluster the store holds: what the user asked.
func committedCR(s *properties.State, namespace, name string) (*ZookeeperCluster, bool) {
	cr, ok := properties.Get[*ZookeeperCluster](s, namespace, name)
	if !ok {
		return nil, false
	}
	return cr, cr.DeletionTimestamp == nil
}

// memberPod is member ord's pod of this instance of cr: the pod of that name
// whose controller is the StatefulSet this cr instance owns. After a delete
// and a re-create of the CR under the same name, the old instance's pods
// (until the garbage collector removes them) are not the new one's members.
func memberPod(s *properties.State, cr *ZookeeperCluster, ord int) (*corev1.Pod, bool) {
	pod, ok := properties.Get[*corev1.Pod](s, cr.Namespace, PodName(cr.Name, ord))
	if !ok {
		return nil, false
	}
	sts, ok := properties.Get[*appsv1.StatefulSet](s, cr.Namespace, StatefulSetName(cr.Name))
	if !ok || !properties.ControlledBy(sts, cr) || !properties.ControlledBy(pod, sts) {
		return nil, false
	}
	return pod, true
}

// Properties are the guarantees the zookeeper scenarios check.
func Properties() []properties.Property {
	return []properties.Property{
		properties.NoDeleteOfLive("NoDeleteOfLive(member PVC)",
			func(obj runtime.Object) bool {
				pvc, ok := obj.(*corev1.PersistentVolumeClaim)
				return ok && strings.HasPrefix(pvc.Name, PVCTemplateName+"-") && pvc.Labels[AppLabel] != ""
			},
			func(s *properties.State, obj runtime.Object) (bool, string) {
				pvc := obj.(*corev1.PersistentVolumeClaim)
				cr, ok := committedCR(s, pvc.Namespace, pvc.Labels[AppLabel])
				if !ok {
					return false, ""
				}
				ord, ok := OrdinalOf(pvc.Name)
				if !ok || int32(ord) >= cr.Spec.Replicas {
					return false, ""
				}
				pod, ok := memberPod(s, cr, ord)
				if !ok || pod.DeletionTimestamp != nil {
					return false, ""
				}
				return true, fmt.Sprintf("member %d is wanted (the committed %s/%s has spec.replicas=%d at rev %s) and its pod %s exists", ord, cr.Namespace, cr.Name, cr.Spec.Replicas, cr.ResourceVersion, pod.Name)
			}),
		properties.NoScaleBelow("NoScaleBelow(member StatefulSet)", func(s *properties.State, sts *appsv1.StatefulSet) (int32, bool, string) {
			ref := metav1.GetControllerOf(sts)
			if ref == nil || ref.Kind != crKind {
				return 0, false, ""
			}
			cr, ok := committedCR(s, sts.Namespace, ref.Name)
			if !ok || !properties.ControlledBy(sts, cr) {
				return 0, false, "" // no CR, or an earlier instance's StatefulSet
			}
			return cr.Spec.Replicas, true, fmt.Sprintf("the committed %s/%s has spec.replicas=%d at rev %s", cr.Namespace, cr.Name, cr.Spec.Replicas, cr.ResourceVersion)
		}),
		properties.EventuallyConverges("EventuallyConverges(members match spec)", converged),
		properties.NoReconcilePanic(),
		properties.NoEndlessReconcile(),
	}
}

// converged: every ZookeeperCluster has exactly spec.replicas ready member
// pods, live member PVCs, and a StatefulSet asking for spec.replicas.
func converged(s *properties.State) (bool, string) {
	for _, cr := range properties.List[*ZookeeperCluster](s, "", nil) {
		if cr.DeletionTimestamp != nil {
			continue
		}
		want := int(cr.Spec.Replicas)
		ready, pvcs, extra := 0, 0, 0
		sts, ok := properties.Get[*appsv1.StatefulSet](s, cr.Namespace, StatefulSetName(cr.Name))
		if ok && !properties.ControlledBy(sts, cr) {
			sts, ok = nil, false // the StatefulSet of an earlier instance of the same name
		}
		for _, p := range properties.List[*corev1.Pod](s, cr.Namespace, nil) {
			if ok && properties.ControlledBy(p, sts) && simulator.PodServing(p) {
				ready++
			}
		}
		for _, p := range properties.List[*corev1.PersistentVolumeClaim](s, cr.Namespace, nil) {
			if p.Labels[AppLabel] != cr.Name || p.DeletionTimestamp != nil {
				continue
			}
			if ord, ok := OrdinalOf(p.Name); ok && ord < want {
				pvcs++
			} else {
				extra++
			}
		}
		// With reclaimPolicy Retain the PVCs of removed members stay, on
		// purpose; with Delete the operator must clean them up.
		if cr.Spec.Persistence == nil || cr.Spec.Persistence.ReclaimPolicy != VolumeReclaimPolicyDelete {
			extra = 0
		}
		stsReplicas := int32(-1)
		if ok && sts.Spec.Replicas != nil {
			stsReplicas = *sts.Spec.Replicas
		}
		if ready != want || pvcs != want || extra != 0 || stsReplicas != cr.Spec.Replicas {
			return false, fmt.Sprintf("%s/%s wants %d members: %d ready pods, %d live member PVCs and %d left over, StatefulSet replicas %d", cr.Namespace, cr.Name, want, ready, pvcs, extra, stsReplicas)
		}
	}
	return true, ""
}
