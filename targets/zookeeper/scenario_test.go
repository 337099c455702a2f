package zookeeper

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

func TestScenarioNoFaultsConverges(t *testing.T) {
	for _, v := range Variants() {
		t.Run(string(v), func(t *testing.T) {
			none := model.FaultBudget{}
			// Fair turns (an empty script), no faults.
			res, err := simulator.RunScript(Scenario(v), nil, simulator.RunOptions{Faults: &none})
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() {
				t.Log(res.History.Lines())
			}
			if len(res.Violations) > 0 {
				t.Fatalf("violations: %v", res.Violations)
			}
			if !res.Quiescent {
				t.Fatalf("not quiescent after %d steps", res.Steps)
			}
		})
	}
}

// The convergence predicate: with reclaimPolicy Retain the PVCs of removed
// members may stay; with Delete they must go.
func TestConvergedRespectsReclaimPolicy(t *testing.T) {
	h := &model.History{}
	add := func(obj client.Object) {
		h.Events = append(h.Events, model.Event{Step: len(h.Events) + 1, Op: model.OpCreate, Kind: obj.GetObjectKind().GroupVersionKind().Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Change: model.ChangeAdded, Object: obj})
	}
	cr := &ZookeeperCluster{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CRName}, Spec: ZookeeperClusterSpec{Replicas: 1, Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyRetain}}}
	cr.SetGroupVersionKind(GroupVersion.WithKind("ZookeeperCluster"))
	cr.UID = "uid-cr"
	one, yes := int32(1), true
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: StatefulSetName(CRName), UID: "uid-sts",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: GroupVersion.String(), Kind: "ZookeeperCluster", Name: CRName, UID: cr.UID, Controller: &yes}}},
		Spec: appsv1.StatefulSetSpec{Replicas: &one}}
	sts.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: PodName(CRName, 0), Labels: Labels(CRName),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: &yes}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	add(cr)
	add(sts)
	add(pod)
	for i := 0; i < 2; i++ {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: PVCName(CRName, i), Labels: Labels(CRName)}}
		pvc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"))
		add(pvc)
	}
	if ok, why := converged(properties.Replay(h, -1)); !ok {
		t.Fatalf("Retain keeps member 1's PVC on purpose; got not converged: %s", why)
	}
	del := cr.DeepCopy()
	del.Spec.Persistence.ReclaimPolicy = VolumeReclaimPolicyDelete
	h.Events = append(h.Events, model.Event{Step: len(h.Events) + 1, Op: model.OpUpdate, Kind: "ZookeeperCluster", Namespace: Namespace, Name: CRName, Change: model.ChangeModified, Object: del})
	if ok, why := converged(properties.Replay(h, -1)); ok || !strings.Contains(why, "1 left over") {
		t.Fatalf("with Delete the left-over PVC must count; got %v %q", ok, why)
	}
}
