package simulator_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/simulator"
)

// labelInOrder: ConfigMaps a and b exist, and a user labels the ones
// named, one per workload step, in that order, beside a controller of
// Secrets that does nothing (its informer holds no ConfigMap).
func labelInOrder(opaque bool, names ...string) *simulator.Scenario {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	var steps []simulator.WorkloadStep
	for _, name := range names {
		steps = append(steps, simulator.WorkloadStep{Name: "label", Do: func(ctx context.Context, c client.Client) error {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, cm); err != nil {
				return err
			}
			cm.Labels = map[string]string{"labelled": "yes"}
			return c.Update(ctx, cm)
		}})
	}
	idle := simulator.ControllerSpec{Name: "idle", For: &corev1.Secret{}, New: func(client.Client) reconcile.Reconciler {
		return reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	}}
	return &simulator.Scenario{Name: "label-in-order", Scheme: scheme, NoBuiltins: true, Controllers: []simulator.ControllerSpec{idle}, Workload: steps, OpaqueResourceVersions: opaque,
		Objects: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}},
		}}
}

// Labelling ConfigMap a then b, and b then a, ends in the same contents
// with the resourceVersions swapped. A controller that orders
// resourceVersions (zookeeper's owner-rv guard) can tell the two apart,
// so by default their fingerprints differ; with OpaqueResourceVersions
// declared they are equal, and the search merges them. Mutation tried:
// leaving the resourceVersions out of the fingerprint fails the first
// check, hashing them whatever the scenario declares the second.
func TestResourceVersionsAreFingerprintedUnlessOpaque(t *testing.T) {
	fingerprint := func(opaque bool, names ...string) uint64 {
		t.Helper()
		var w *simulator.World
		w, err := simulator.NewWorld(labelInOrder(opaque, names...), &faultAfter{w: &w}, simulator.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Run(); err != nil {
			t.Fatal(err)
		}
		// The state the run ends in: both ConfigMaps labelled.
		h, ok := w.StateHash()
		if !ok {
			t.Fatalf("%v: the world has no fingerprint at the end", names)
		}
		return h
	}
	if ab, ba := fingerprint(false, "a", "b"), fingerprint(false, "b", "a"); ab == ba {
		t.Errorf("default: a then b and b then a fingerprint both %x, want different (their resourceVersions are swapped)", ab)
	}
	if ab, ba := fingerprint(true, "a", "b"), fingerprint(true, "b", "a"); ab != ba {
		t.Errorf("OpaqueResourceVersions: a then b and b then a fingerprint %x and %x, want equal (the same contents)", ab, ba)
	}
}
