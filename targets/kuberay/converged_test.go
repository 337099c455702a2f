package kuberay

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestIsWorkerIsTheSelector: isWorker, which reads the three labels in
// place, matches exactly the pods the selector of workerLabels matches,
// over every combination of each label absent, empty, right or wrong, with
// and without an unrelated label.
func TestIsWorkerIsTheSelector(t *testing.T) {
	sel := labels.SelectorFromSet(workerLabels())
	keys := []string{utils.RayClusterLabelKey, utils.RayNodeGroupLabelKey, utils.RayNodeTypeLabelKey}
	want := workerLabels()
	values := func(k string) []*string { return []*string{nil, ptr.To(""), ptr.To(want[k]), ptr.To(want[k] + "x")} }
	n, matched := 0, 0
	for _, a := range values(keys[0]) {
		for _, b := range values(keys[1]) {
			for _, c := range values(keys[2]) {
				for _, extra := range []bool{false, true} {
					l := map[string]string{}
					for i, v := range []*string{a, b, c} {
						if v != nil {
							l[keys[i]] = *v
						}
					}
					if extra {
						l["app"] = "ray"
					}
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: l}}
					if got, want := isWorker(pod), sel.Matches(labels.Set(l)); got != want {
						t.Errorf("labels %v: isWorker %v, the selector %v", l, got, want)
					}
					n++
					if isWorker(pod) {
						matched++
					}
				}
			}
		}
	}
	if matched != 2 || n != 128 {
		t.Fatalf("%d of %d label sets are workers, want 2 of 128", matched, n)
	}
}

// TestConvergedAnswersAsConvergedOn: the workload's wait (converged, which
// builds no explanation) answers exactly as convergedOn, the property's
// judgement, on seeded random states near convergence: clusters running,
// suspended (by spec or a committed Suspending condition), deleted or
// absent, with pods and services of every label, phase, owner and
// deletion state.
func TestConvergedAnswersAsConvergedOn(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	answers := map[bool]int{}
	reasons := map[string]int{}
	for i := 0; i < 4000; i++ {
		rc, pods, svcs := randomClusterState(rng)
		r := &stateReader{rc: rc, pods: pods, svcs: svcs}
		podPtrs := make([]*corev1.Pod, len(pods))
		for j := range pods {
			podPtrs[j] = &pods[j]
		}
		svcPtrs := make([]*corev1.Service, len(svcs))
		for j := range svcs {
			svcPtrs[j] = &svcs[j]
		}
		want, why := convergedOn(rc, podPtrs, svcPtrs)
		if got := converged(context.Background(), r); got != want {
			t.Fatalf("state %d: converged says %v, convergedOn %v (%s)\ncluster %+v\npods %+v\nservices %+v", i, got, want, why, rc, pods, svcs)
		}
		answers[want]++
		reasons[firstWords(why)]++
	}
	if answers[true] < 200 || answers[false] < 200 {
		t.Fatalf("answers %v: the states do not exercise both", answers)
	}
	// Every way of (not) converging was met.
	for _, w := range []string{"no pods", "the cluster is", "want one Running", "the head service", "want N Running workers", "pods still terminating", "head and"} {
		if reasons[w] == 0 {
			t.Errorf("no state was judged %q (reasons %v)", w, reasons)
		}
	}
}

// firstWords keys a reason by its fixed opening.
func firstWords(why string) string {
	for _, p := range []string{"no pods", "the cluster is", "want one Running", "the head service", "pods still terminating", "head and"} {
		if len(why) >= len(p) && why[:len(p)] == p {
			return p
		}
	}
	if strings.HasPrefix(why, "want ") && strings.Contains(why, " Running workers in group") {
		return "want N Running workers"
	}
	return why
}

// randomClusterState starts from a converged cluster of 2 workers and
// changes a few things at random.
func randomClusterState(rng *rand.Rand) (*rayv1.RayCluster, []corev1.Pod, []corev1.Service) {
	rc := NewRayCluster(2)
	rc.UID = "rc-uid"
	uid := rc.UID
	owned := func(uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: ClusterName, UID: uid}}
	}
	pod := func(name string, node rayv1.RayNodeType) corev1.Pod {
		l := map[string]string{utils.RayClusterLabelKey: ClusterName, utils.RayNodeTypeLabelKey: string(node)}
		if node == rayv1.WorkerNode {
			l[utils.RayNodeGroupLabelKey] = GroupName
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name, Labels: l, OwnerReferences: owned(uid)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	pods := []corev1.Pod{pod("head", rayv1.HeadNode), pod("w1", rayv1.WorkerNode), pod("w2", rayv1.WorkerNode)}
	svcs := []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "head-svc", OwnerReferences: owned(uid),
		Labels: map[string]string{utils.RayClusterLabelKey: ClusterName, utils.RayNodeTypeLabelKey: string(rayv1.HeadNode)}}}}
	now := metav1.Now()
	if rng.Intn(8) == 0 {
		pods, svcs = nil, nil // torn down
	}
	for n := rng.Intn(4); n > 0; n-- {
		switch rng.Intn(14) {
		case 0:
			rc = nil
		case 1:
			if rc != nil {
				rc.Spec.Suspend = ptr.To(rng.Intn(2) == 0)
			}
		case 2:
			if rc != nil {
				rc.DeletionTimestamp = &now
			}
		case 3:
			if rc != nil {
				meta.SetStatusCondition(&rc.Status.Conditions, metav1.Condition{Type: string(rayv1.RayClusterSuspending), Status: metav1.ConditionStatus([]string{"True", "False"}[rng.Intn(2)])})
			}
		case 4:
			if rc != nil {
				rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(rng.Intn(6)))
			}
		case 5:
			if rc != nil {
				rc.Spec.WorkerGroupSpecs[0].Suspend = ptr.To(true)
			}
		case 6:
			pods = append(pods, pod(fmt.Sprintf("w%d", len(pods)+1), rayv1.WorkerNode))
		case 7:
			pods = append(pods, pod(fmt.Sprintf("h%d", len(pods)+1), rayv1.HeadNode))
		case 8:
			if len(pods) > 0 {
				i := rng.Intn(len(pods))
				pods = append(pods[:i], pods[i+1:]...)
			}
		case 9:
			if len(pods) > 0 {
				pods[rng.Intn(len(pods))].Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodFailed, corev1.PodSucceeded}[rng.Intn(3)]
			}
		case 10:
			if len(pods) > 0 {
				pods[rng.Intn(len(pods))].DeletionTimestamp = &now
			}
		case 11:
			if len(pods) > 0 {
				pods[rng.Intn(len(pods))].OwnerReferences = owned(types.UID([]string{"old-uid", ""}[rng.Intn(2)]))
			}
		case 12:
			if len(pods) > 0 {
				l := pods[rng.Intn(len(pods))].Labels
				k := []string{utils.RayClusterLabelKey, utils.RayNodeGroupLabelKey, utils.RayNodeTypeLabelKey}[rng.Intn(3)]
				if rng.Intn(2) == 0 {
					delete(l, k)
				} else {
					l[k] = "other"
				}
			}
		case 13:
			if rng.Intn(2) == 0 || len(svcs) == 0 {
				svcs = nil
			} else {
				svcs[0].OwnerReferences = owned("old-uid")
			}
		}
	}
	return rc, pods, svcs
}

// stateReader is a client.Reader over one RayCluster (nil: none), pods and
// services, with typed answers.
type stateReader struct {
	rc   *rayv1.RayCluster
	pods []corev1.Pod
	svcs []corev1.Service
}

func (r *stateReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	rc, ok := obj.(*rayv1.RayCluster)
	if !ok || r.rc == nil || key.Name != r.rc.Name || key.Namespace != r.rc.Namespace {
		return apierrors.NewNotFound(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, key.Name)
	}
	r.rc.DeepCopyInto(rc)
	return nil
}

func (r *stateReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *corev1.PodList:
		l.Items = nil
		for i := range r.pods {
			l.Items = append(l.Items, *r.pods[i].DeepCopy())
		}
	case *corev1.ServiceList:
		l.Items = nil
		for i := range r.svcs {
			l.Items = append(l.Items, *r.svcs[i].DeepCopy())
		}
	default:
		return fmt.Errorf("stateReader: cannot list %T", list)
	}
	return nil
}
