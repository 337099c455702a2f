package casskop

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/simulator"
)

// Workload steps for generated workloads (explore.CheckWorkloads): each
// works from any state the steps before it leave. A scale of a cluster that
// does not exist, or a create of one that exists, is a no-op, as the failed
// kubectl command would be. Each waits, as a user would, until the rack
// matches the spec the store holds (settled).

// CreateStep creates CassandraCluster cc with one dc, one rack, nodes
// nodes and deletePVC (as the seed scenario does).
func CreateStep(nodes int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("create cc with %d nodes", nodes),
		Do: func(ctx context.Context, c client.Client) error {
			err := createCR(nodes)(ctx, c)
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		Until: settled,
	}
}

// ScaleStep sets spec.nodesPerRacks.
func ScaleStep(nodes int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("set cc nodesPerRacks %d", nodes),
		Do: func(ctx context.Context, c client.Client) error {
			err := scaleCR(nodes)(ctx, c)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		Until: settled,
	}
}

// settled: no cc, or the rack's StatefulSet asks for and has nodesPerRacks
// ready pods and no pod or PVC is left above them.
func settled(ctx context.Context, r client.Reader) bool {
	var cc CassandraCluster
	if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CRName}, &cc); err != nil {
		return apierrors.IsNotFound(err)
	}
	n := cc.Spec.NodesPerRacks
	var sts appsv1.StatefulSet
	if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: stsName}, &sts); err != nil {
		return false
	}
	if sts.Status.ReadyReplicas != n || sts.Spec.Replicas == nil || *sts.Spec.Replicas != n {
		return false
	}
	for i := n; i < n+4; i++ {
		pod := PodName(stsName, i)
		if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: pod}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
			return false
		}
		if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: PVCName(pod)}, &corev1.PersistentVolumeClaim{}); !apierrors.IsNotFound(err) {
			return false
		}
	}
	return true
}
