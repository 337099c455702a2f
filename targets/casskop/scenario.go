package casskop

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// The scenario's cluster: CassandraCluster "cc" with one dc and one rack.
const (
	Namespace = "default"
	CRName    = "cc"
	DCName    = "dc1"
	RackName  = "rack1"
)

// Scheme returns a scheme with the built-in types and CassandraCluster.
func Scheme() *runtime.Scheme { return simulator.NewScheme(AddToScheme) }

var scheme = Scheme()

// Variants lists the shipped variants.
func Variants() []Variant { return []Variant{Buggy, UpstreamFix, Fixed} }

// Controller returns the controller under test: casskop watches only its
// CassandraClusters and requeues every 5 s.
func Controller(v Variant) simulator.ControllerSpec {
	return simulator.ControllerSpec{
		Name: "casskop",
		For:  &CassandraCluster{},
		NewWithEnv: func(env *simulator.Env) reconcile.Reconciler {
			nodes := env.World.ActorNamed(NodesActor).(*Nodes)
			return NewReconciler(env.Client, Options{Variant: v, Nodes: nodes.Client(), Now: env.Now})
		},
	}
}

var stsName = StatefulSetName(CRName, DCName, RackName)

// Scenario returns the seed bug's scenario for one variant: one dc, one
// rack, 2 nodes with deletePVC; scale to 1 and wait for the decommission;
// scale back to 2. Fault budget: one crash-restart.
func Scenario(v Variant) *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "casskop/" + string(v),
		Description: "casskop (" + string(v) + "): decommission 2 -> 1 -> 2 with a crash",
		Scheme:      scheme,
		// Upstream's CRD had no status subresource: the operator writes
		// status with a plain Update.
		StoreOptions: simulator.StoreOptions{NoStatusSubresource: []schema.GroupKind{GroupVersion.WithKind("CassandraCluster").GroupKind()}},
		APIServers:   1,
		Controllers:  []simulator.ControllerSpec{Controller(v)},
		Actors:       func(w *simulator.World) []simulator.Actor { return []simulator.Actor{NewNodes(w)} },
		Workload: []simulator.WorkloadStep{
			{Name: "create cc with 2 nodes", Do: createCR(2), Until: readyNodes(2)},
			{Name: "scale cc to 1 node", Do: scaleCR(1), Until: decommissionDone(1)},
			{Name: "scale cc back to 2 nodes", Do: scaleCR(2), Until: readyNodes(2)},
		},
		Faults:     model.FaultBudget{Crashes: 1},
		Properties: Properties(),
		// Longer than the operator's longest wait (the 120 s retry of a
		// decommission that did not start), so a quiet cluster is settled.
		QuietPeriod: model.FromDuration(130 * time.Second),
		// No variant reads a resourceVersion.
		OpaqueResourceVersions: true,
	}
}

func createCR(nodes int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &CassandraCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CRName},
			Spec: CassandraClusterSpec{NodesPerRacks: nodes, DeletePVC: true,
				Topology: Topology{DC: []DC{{Name: DCName, Rack: []Rack{{Name: RackName}}}}}},
		})
	}
}

func scaleCR(nodes int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var cc CassandraCluster
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CRName}, &cc); err != nil {
			return err
		}
		cc.Spec.NodesPerRacks = nodes
		return c.Update(ctx, &cc)
	}
}

func readyNodes(n int32) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		// Read in place, not copied (SharedGet): the wait is asked after
		// every change.
		sts, err := simulator.SharedGet[*appsv1.StatefulSet](ctx, r, client.ObjectKey{Namespace: Namespace, Name: stsName})
		if err != nil {
			return false
		}
		return sts.Status.ReadyReplicas == n && sts.Spec.Replicas != nil && *sts.Spec.Replicas == n
	}
}

// decommissionDone: the pod above the new size and its PVC are gone.
func decommissionDone(n int32) func(context.Context, client.Reader) bool {
	// Named once: the wait is asked after every change.
	pod := client.ObjectKey{Namespace: Namespace, Name: PodName(stsName, n)}
	pvc := client.ObjectKey{Namespace: Namespace, Name: PVCName(pod.Name)}
	return func(ctx context.Context, r client.Reader) bool {
		_, err1 := simulator.SharedGet[*corev1.Pod](ctx, r, pod)
		_, err2 := simulator.SharedGet[*corev1.PersistentVolumeClaim](ctx, r, pvc)
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
	}
}

// Properties are the guarantees the casskop scenarios check.
func Properties() []properties.Property {
	return []properties.Property{
		properties.EventuallyConverges("EventuallyConverges(rack matches nodesPerRacks)", converged),
		// Three: the failures of a stuck reconcile back off exponentially,
		// so a long wait holds few of them.
		properties.NoStuckReconcile(3),
		properties.NoReconcilePanic(),
		properties.NoEndlessReconcile(),
	}
}

// converged: the rack has nodesPerRacks ready pods and PVCs, its
// StatefulSet asks for nodesPerRacks, and the last action is Done.
func converged(s *properties.State) (bool, string) {
	for _, cc := range properties.List[*CassandraCluster](s, "", nil) {
		if cc.DeletionTimestamp != nil {
			continue
		}
		for _, dc := range cc.Spec.Topology.DC {
			for _, rack := range dc.Rack {
				want := cc.Spec.NodesPerRacks
				// The names, built once per rack (the property judges at
				// every change after Settle).
				m := rackMembers(cc.Name, dc.Name, rack.Name, want+4)
				var ready, pvcs int32
				// Only this instance's StatefulSet and its pods count: a
				// re-created cluster of the same name is a new instance.
				sts, stsOK := properties.Get[*appsv1.StatefulSet](s, cc.Namespace, m.statefulSet)
				stsOK = stsOK && properties.ControlledBy(sts, cc)
				for i := int32(0); i < want+4; i++ {
					if p, ok := properties.Get[*corev1.Pod](s, cc.Namespace, m.pods[i]); ok && stsOK && properties.ControlledBy(p, sts) && simulator.PodServing(p) {
						ready++
					}
					if p, ok := properties.Get[*corev1.PersistentVolumeClaim](s, cc.Namespace, m.pvcs[i]); ok && p.DeletionTimestamp == nil {
						pvcs++
					}
				}
				stsReplicas := int32(-1)
				if stsOK && sts.Spec.Replicas != nil {
					stsReplicas = *sts.Spec.Replicas
				}
				action := "none"
				if rs := cc.Status.CassandraRackStatus[DCRackName(dc.Name, rack.Name)]; rs != nil {
					action = rs.CassandraLastAction.Name + "/" + rs.CassandraLastAction.Status
					if ready == want && pvcs == want && stsReplicas == want && rs.CassandraLastAction.Status == StatusDone {
						continue
					}
				}
				return false, fmt.Sprintf("rack %s of %s/%s wants %d nodes: %d ready pods, %d live PVCs, StatefulSet replicas %d, last action %s", DCRackName(dc.Name, rack.Name), cc.Namespace, cc.Name, want, ready, pvcs, stsReplicas, action)
			}
		}
	}
	return true, ""
}

// members are the names converged looks up for one rack: its StatefulSet,
// and the pod and PVC of each ordinal from 0.
type members struct {
	statefulSet string
	pods, pvcs  []string
}

// memberNames holds the members of every rack converged has judged, by
// rackKey; an entry is never modified once stored (a longer one replaces
// it), so concurrent workers share them.
var memberNames sync.Map

type rackKey struct{ cluster, dc, rack string }

// rackMembers returns the names of a rack's StatefulSet and of the pods and
// PVCs of its ordinals 0 to n-1 (at least): StatefulSetName, PodName and
// PVCName, built once per rack instead of at every judgement.
func rackMembers(cluster, dc, rack string, n int32) *members {
	key := rackKey{cluster, dc, rack}
	if v, ok := memberNames.Load(key); ok {
		if m := v.(*members); int32(len(m.pods)) >= n {
			return m
		}
	}
	m := &members{statefulSet: StatefulSetName(cluster, dc, rack)}
	for i := int32(0); i < max(n, 8); i++ {
		pod := PodName(m.statefulSet, i)
		m.pods = append(m.pods, pod)
		m.pvcs = append(m.pvcs, PVCName(pod))
	}
	memberNames.Store(key, m)
	return m
}
