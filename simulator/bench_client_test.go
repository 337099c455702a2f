package simulator

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/opcheck/opcheck/model"
)

const benchObjects = 10

// clientOpsMix is the benchmarked operation mix: create 10 pods and 10
// PVCs, get each, list each kind by label, update each, status-update each,
// delete each (pods with grace period 0, so that both backends remove them).
// It checks that every call succeeded and that nothing is left.
func clientOpsMix(ctx context.Context, c client.Client) error {
	pods := make([]*corev1.Pod, benchObjects)
	pvcs := make([]*corev1.PersistentVolumeClaim, benchObjects)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("zk-%d", i), Labels: map[string]string{"app": "zk"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "zk", Image: "zookeeper:3.9",
				Ports: []corev1.ContainerPort{{Name: "client", ContainerPort: 2181}}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("data-zk-%d", i)}}}}},
		}
		pvcs[i] = &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("data-zk-%d", i), Labels: map[string]string{"app": "zk"}},
			Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}
	}
	for i := range pods {
		if err := c.Create(ctx, pods[i]); err != nil {
			return err
		}
		if err := c.Create(ctx, pvcs[i]); err != nil {
			return err
		}
	}
	for i := range pods {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pods[i]), pods[i]); err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pvcs[i]), pvcs[i]); err != nil {
			return err
		}
	}
	var pl corev1.PodList
	if err := c.List(ctx, &pl, client.InNamespace("bench"), client.MatchingLabels{"app": "zk"}); err != nil {
		return err
	}
	var cl corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &cl, client.InNamespace("bench"), client.MatchingLabels{"app": "zk"}); err != nil {
		return err
	}
	if len(pl.Items) != benchObjects || len(cl.Items) != benchObjects {
		return fmt.Errorf("listed %d pods and %d pvcs", len(pl.Items), len(cl.Items))
	}
	for i := range pods {
		pods[i].Labels["rev"] = "2"
		if err := c.Update(ctx, pods[i]); err != nil {
			return err
		}
		pvcs[i].Labels["rev"] = "2"
		if err := c.Update(ctx, pvcs[i]); err != nil {
			return err
		}
	}
	for i := range pods {
		pods[i].Status.Phase = corev1.PodRunning
		if err := c.Status().Update(ctx, pods[i]); err != nil {
			return err
		}
		pvcs[i].Status.Phase = corev1.ClaimBound
		if err := c.Status().Update(ctx, pvcs[i]); err != nil {
			return err
		}
	}
	for i := range pods {
		if err := c.Delete(ctx, pods[i], client.GracePeriodSeconds(0)); err != nil {
			return err
		}
		if err := c.Delete(ctx, pvcs[i]); err != nil {
			return err
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pods[0]), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("pod after delete: %v", err)
	}
	return nil
}

func benchScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// BenchmarkClientOps runs the same operation mix through client.Client
// against a fresh simulated cluster and against a fresh controller-runtime
// fake client per iteration. One op is one whole mix (103 calls).
func BenchmarkClientOps(b *testing.B) {
	s := benchScheme()
	ctx := context.Background()
	b.Run("opcheck", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := NewCluster(s, ClusterOptions{StoreOptions: StoreOptions{Namespaces: []string{"bench"}}})
			if err := clientOpsMix(ctx, c.Client(model.ActorUser, 1, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fake", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&corev1.Pod{}, &corev1.PersistentVolumeClaim{}).Build()
			if err := clientOpsMix(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestClientOpsMix runs the benchmark's mix once on each backend as a test,
// so that `go test` proves the benchmark measures work that succeeds.
func TestClientOpsMix(t *testing.T) {
	s := benchScheme()
	c := NewCluster(s, ClusterOptions{StoreOptions: StoreOptions{Namespaces: []string{"bench"}}})
	if err := clientOpsMix(context.Background(), c.Client(model.ActorUser, 1, false)); err != nil {
		t.Fatal(err)
	}
	// 20 creates + 20 updates + 20 status updates + 20 deletions.
	if got := c.Store.Revision(); got != 80 {
		t.Fatalf("opcheck: %d revisions, want 80", got)
	}
	if n := len(c.History.Events); n != 20+20+2+20+20+20+1 {
		t.Fatalf("opcheck: %d events", n)
	}
	f := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&corev1.Pod{}, &corev1.PersistentVolumeClaim{}).Build()
	if err := clientOpsMix(context.Background(), f); err != nil {
		t.Fatal(err)
	}
}
