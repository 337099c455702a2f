package zookeeper

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/simulator"
)

// Workload steps for generated workloads (explore.CheckWorkloads): each
// works from any state the steps before it leave. A step on a cluster that
// does not exist, or a create of one that exists, is a no-op, as the failed
// kubectl command would be. Each waits, as a user would, until the members
// match the spec the store holds (settled).

// CreateStep creates ZookeeperCluster zk with replicas members and
// reclaimPolicy Delete (as the seed scenario does).
func CreateStep(replicas int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("create zk with %d replicas", replicas),
		Do: func(ctx context.Context, c client.Client) error {
			err := c.Create(ctx, &ZookeeperCluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CRName},
				Spec:       ZookeeperClusterSpec{Replicas: replicas, Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyDelete}},
			})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		Until: settled,
	}
}

// ScaleStep sets spec.replicas, as `kubectl scale` does.
func ScaleStep(replicas int32) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name:  fmt.Sprintf("scale zk to %d", replicas),
		Do:    updateCR(func(cr *ZookeeperCluster) { cr.Spec.Replicas = replicas }),
		Until: settled,
	}
}

// ReclaimPolicyStep sets spec.persistence.reclaimPolicy.
func ReclaimPolicyStep(p VolumeReclaimPolicy) simulator.WorkloadStep {
	return simulator.WorkloadStep{
		Name: fmt.Sprintf("set zk reclaimPolicy %s", p),
		Do: updateCR(func(cr *ZookeeperCluster) {
			if cr.Spec.Persistence == nil {
				cr.Spec.Persistence = &Persistence{}
			}
			cr.Spec.Persistence.ReclaimPolicy = p
		}),
		Until: settled,
	}
}

// updateCR reads the latest zk and writes it changed by f; no zk is a
// no-op.
func updateCR(f func(*ZookeeperCluster)) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var cr ZookeeperCluster
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CRName}, &cr); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		f(&cr)
		return c.Update(ctx, &cr)
	}
}

// settled: no zk, or spec.replicas ready members and no member pod above
// them (nor, with reclaimPolicy Delete, a PVC above them).
func settled(ctx context.Context, r client.Reader) bool {
	var cr ZookeeperCluster
	if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CRName}, &cr); err != nil {
		return apierrors.IsNotFound(err)
	}
	n := int(cr.Spec.Replicas)
	if !readyMembers(n)(ctx, r) {
		return false
	}
	del := cr.Spec.Persistence != nil && cr.Spec.Persistence.ReclaimPolicy == VolumeReclaimPolicyDelete
	for ord := n; ord < n+4; ord++ {
		if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: PodName(CRName, ord)}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
			return false
		}
		if !del {
			continue
		}
		if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: PVCName(CRName, ord)}, &corev1.PersistentVolumeClaim{}); !apierrors.IsNotFound(err) {
			return false
		}
	}
	return true
}
