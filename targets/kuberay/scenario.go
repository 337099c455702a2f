package kuberay

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	configapi "github.com/ray-project/kuberay/ray-operator/apis/config/v1alpha1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	ray "github.com/ray-project/kuberay/ray-operator/controllers/ray"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/batchscheduler"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// The scenarios' cluster: RayCluster "raycluster" in namespace "default",
// with worker group "small" of at most MaxReplicas workers.
const (
	Namespace   = "default"
	ClusterName = "raycluster"
	GroupName   = "small"
	MaxReplicas = 4
	MinReplicas = 0
)

// ControllerName names the controller under test in histories.
const ControllerName = "kuberay-operator"

// Scheme returns a scheme with the built-in types and KubeRay's apis/ray/v1
// types (RayCluster, RayJob, RayService), registered by the module's own
// AddToScheme.
func Scheme() *runtime.Scheme { return simulator.NewScheme(rayv1.AddToScheme) }

var scheme = Scheme()

// Every reconcile reads the RayCluster (and writes its status): copied
// through its generated methods called directly, not through reflection.
func init() {
	simulator.RegisterStatusCopier(func(rc *rayv1.RayCluster) *rayv1.RayClusterStatus { return &rc.Status })
}

var quietLogs sync.Once

// Controller returns KubeRay's RayCluster controller, built as KubeRay's
// main builds it with its default configuration (no metrics, the default
// batch scheduler, one reconcile at a time): ray.NewReconciler registers
// its pod-UID field index and takes the manager's client, scheme and event
// recorder; SetupWithManager wires For(RayCluster) with its predicates and
// Owns(Pod), Owns(Service).
func Controller() simulator.ControllerSpec {
	// KubeRay's log constructor writes to controller-runtime's global
	// logger; without one, controller-runtime warns on stderr after 30 s.
	quietLogs.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	return simulator.ControllerSpec{
		Name: ControllerName,
		For:  &rayv1.RayCluster{},
		// The reconciler's scale expectations live in memory from one
		// reconcile to the next: two paths whose operators expect
		// different pods must not merge.
		KeepsMemory: true,
		Setup: func(ctx context.Context, mgr manager.Manager) error {
			config := configapi.Configuration{ReconcileConcurrency: configapi.DefaultReconcileConcurrency}
			batch, err := batchscheduler.NewSchedulerManager(ctx, config, mgr.GetConfig(), mgr.GetClient())
			if err != nil {
				return err
			}
			opts := ray.RayClusterReconcilerOptions{BatchSchedulerManager: batch}
			return ray.NewReconciler(ctx, mgr, opts).SetupWithManager(mgr, config.ReconcileConcurrency)
		},
	}
}

// Variant names a shipped scenario.
type Variant string

const (
	// Scale: create with 2 workers, scale up to 3, scale down to 2 naming
	// the worker to remove in workersToDelete, scale down to 1 (KubeRay
	// picks the pod).
	Scale Variant = "scale"
	// Lifecycle: create with 2 workers, delete a worker pod by hand,
	// suspend, resume, delete the cluster.
	Lifecycle Variant = "lifecycle"
)

// Variants lists the shipped scenarios in `explore list` order.
func Variants() []Variant { return []Variant{Scale, Lifecycle} }

// Scenario returns one shipped scenario: one apiserver more than the
// controller needs (so a restart can land on a stale one), and a fault
// budget of one crash, one stale cache, one dropped event and one pod
// eviction.
func Scenario(v Variant) *simulator.Scenario {
	sc := &simulator.Scenario{
		Name:        "kuberay/" + string(v),
		Scheme:      scheme,
		APIServers:  2,
		Controllers: []simulator.ControllerSpec{Controller()},
		Faults:      model.FaultBudget{Crashes: 1, Stale: 1, Drops: 1, Evictions: 1},
		StaleKinds:  []client.Object{&rayv1.RayCluster{}, &corev1.Pod{}},
		Properties:  Properties(),
		// KubeRay requeues every cluster every 300 s; two such requeues that
		// change nothing show it has settled.
		QuietPeriod: model.FromDuration(601 * time.Second),
		// KubeRay's scale expectations time out after 30 s of time.Now:
		// the wall clock follows the logical one (each run in a synctest
		// bubble of its own).
		SyncWallClock: true,
		// ray-operator v1.5.0's controllers never read a resourceVersion
		// (only its generated apply configurations name the field).
		OpaqueResourceVersions: true,
		KnownNondeterminism:    "KubeRay's scale expectations read the expected pods in the order of a client-go indexer's set (Go map order), so the order of those cached Gets in a history may differ between runs of the same choices; the writes do not (TestSameChoicesSameWrites)",
	}
	switch v {
	case Scale:
		sc.Description = "KubeRay RayCluster: 2 workers, scale to 3, to 2 with workersToDelete, to 1; crash, stale cache, dropped event, eviction"
		sc.Workload = []simulator.WorkloadStep{
			CreateStep(2),
			ScaleStep(3),
			ScaleDownNamingStep(2),
			ScaleStep(1),
		}
	case Lifecycle:
		sc.Description = "KubeRay RayCluster: 2 workers, a worker pod deleted by hand, suspend, resume, delete; crash, stale cache, dropped event, eviction"
		sc.Workload = []simulator.WorkloadStep{
			CreateStep(2),
			DeleteWorkerPodStep(),
			SuspendStep(true),
			SuspendStep(false),
			DeleteClusterStep(),
		}
	default:
		panic(fmt.Sprintf("kuberay: unknown variant %q (use one of %v)", v, Variants()))
	}
	return sc
}

// NewRayCluster is the cluster the workloads create: a head group and
// worker group "small" with replicas workers (min 0, max 4, one host per
// replica).
func NewRayCluster(replicas int32) *rayv1.RayCluster {
	container := func(name string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.46.0"}}}
	}
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ClusterName},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.46.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: container("ray-head")},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName:   GroupName,
				Replicas:    ptr.To(replicas),
				MinReplicas: ptr.To(int32(MinReplicas)),
				MaxReplicas: ptr.To(int32(MaxReplicas)),
				// The CRD's schema defaults numOfHosts to 1. The scenarios
				// do not pass the CRD (StoreOptions.CRDs): it is a file of
				// the module, not of its Go packages, and the explore
				// binary must run without the module cache. So the
				// manifest carries the defaulted value (TestCRDFromModule
				// checks every default of the module's CRD is set here).
				NumOfHosts:     1,
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: container("ray-worker")},
			}},
		},
	}
}

// CreateStep creates the RayCluster with replicas workers.
func CreateStep(replicas int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("create raycluster with %d workers", replicas),
		Do: func(ctx context.Context, c client.Client) error {
			err := c.Create(ctx, NewRayCluster(replicas))
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		Until: settled,
	}
}

// ScaleStep sets the worker group's replicas, as `kubectl scale` or the
// autoscaler would.
func ScaleStep(replicas int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name:  fmt.Sprintf("scale workers to %d", replicas),
		Do:    updateCluster(func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(replicas) }),
		Until: settled,
	}
}

// ScaleDownNamingStep sets replicas and names the first live worker pod (by
// name) in scaleStrategy.workersToDelete, as the Ray autoscaler does.
func ScaleDownNamingStep(replicas int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("scale workers to %d deleting the first worker", replicas),
		Do: func(ctx context.Context, c client.Client) error {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels(workerLabels())); err != nil {
				return err
			}
			victim := ""
			for i := range pods.Items {
				if pods.Items[i].DeletionTimestamp == nil {
					victim = pods.Items[i].Name
					break
				}
			}
			return updateCluster(func(rc *rayv1.RayCluster) {
				g := &rc.Spec.WorkerGroupSpecs[0]
				g.Replicas = ptr.To(replicas)
				if victim != "" {
					g.ScaleStrategy.WorkersToDelete = []string{victim}
				}
			})(ctx, c)
		},
		Until: settled,
	}
}

// DeleteWorkerPodStep deletes the first live worker pod by hand.
func DeleteWorkerPodStep() simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: "delete a worker pod by hand",
		Do: func(ctx context.Context, c client.Client) error {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels(workerLabels())); err != nil {
				return err
			}
			for i := range pods.Items {
				if pods.Items[i].DeletionTimestamp == nil {
					return client.IgnoreNotFound(c.Delete(ctx, &pods.Items[i]))
				}
			}
			return nil
		},
		Until: settled,
	}
}

// SuspendStep sets spec.suspend.
func SuspendStep(suspend bool) simulator.WorkloadStep {
	name := "resume raycluster"
	if suspend {
		name = "suspend raycluster"
	}
	return simulator.WorkloadStep{
		Name:  name,
		Do:    updateCluster(func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(suspend) }),
		Until: settled,
	}
}

// DeleteClusterStep deletes the RayCluster (background propagation, as
// kubectl does).
func DeleteClusterStep() simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: "delete raycluster",
		Do: func(ctx context.Context, c client.Client) error {
			rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ClusterName}}
			return client.IgnoreNotFound(c.Delete(ctx, rc, client.PropagationPolicy(metav1.DeletePropagationBackground)))
		},
		Until: settled,
	}
}

// updateCluster reads the latest RayCluster and writes it changed by f; no
// cluster is a no-op.
func updateCluster(f func(*rayv1.RayCluster)) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var rc rayv1.RayCluster
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: ClusterName}, &rc); err != nil {
			return client.IgnoreNotFound(err)
		}
		f(&rc)
		return c.Update(ctx, &rc)
	}
}

// settled: the user's wait condition, on ground truth: the pods match what
// the cluster's spec asks (see converged).
func settled(ctx context.Context, r client.Reader) bool {
	return converged(ctx, r)
}
