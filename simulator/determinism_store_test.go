package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// determinismScript runs a fixed mix of operations against a fresh cluster:
// generated names, clock moves, every write verb, failures, finalizers,
// graceful pod deletion, a paused cache and stale reads. Errors that the
// script provokes on purpose are checked; any other error fails the test.
func determinismScript(t *testing.T, c *Cluster) {
	t.Helper()
	ctx := context.Background()
	user := c.Client(model.ActorUser, 1, true)
	ctrl := c.Client(model.ControllerActor("zk"), 2, false)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	expect := func(err error, pred func(error) bool) {
		t.Helper()
		if !pred(err) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	for i := 0; i < 4; i++ {
		c.Clock.Advance(model.FromDuration(1500 * time.Millisecond))
		w := &semWidget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "zk-", Labels: map[string]string{"i": fmt.Sprint(i % 2)}}, Spec: semWidgetSpec{Size: int32(i)}}
		must(user.Create(ctx, w))
		p := semPod("ns", fmt.Sprintf("p-%d", i))
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: semWidgetGV.String(), Kind: "Widget", Name: w.Name, UID: w.UID}}
		must(user.Create(ctx, p))
		must(user.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "data-"}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}))
	}
	wc, err := c.Server(2).CacheFor(&semWidget{})
	must(err)
	c.Server(2).Pause(wc)

	var wl semWidgetList
	must(user.List(ctx, &wl, client.MatchingLabels{"i": "1"}))
	for i := range wl.Items {
		w := &wl.Items[i]
		w.Spec.Size += 10
		must(user.Update(ctx, w))
		w.Status.Ready = w.Spec.Size
		must(user.Status().Update(ctx, w))
	}
	var stale semWidgetList
	must(ctrl.List(ctx, &stale))
	for i := range stale.Items {
		w := &stale.Items[i]
		w.Spec.Owner = "ctrl"
		err := ctrl.Update(ctx, w)
		if w.Labels["i"] == "1" {
			expect(err, apierrors.IsConflict)
		} else {
			must(err)
		}
	}
	c.Clock.Advance(model.FromDuration(time.Minute))
	var pods corev1.PodList
	must(ctrl.List(ctx, &pods, client.InNamespace("ns")))
	for i := range pods.Items {
		p := &pods.Items[i]
		p.Status.Phase = corev1.PodRunning
		must(ctrl.Status().Update(ctx, p))
		must(ctrl.Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"ready":"yes"}}}`))))
		must(ctrl.Status().Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"status":{"podIP":"10.0.0.`+fmt.Sprint(i+1)+`"}}`))))
	}
	must(user.Delete(ctx, &pods.Items[0]))
	must(user.Delete(ctx, &pods.Items[1], client.GracePeriodSeconds(0)))
	must(user.Delete(ctx, &pods.Items[0], client.GracePeriodSeconds(0)))

	c.Server(2).Resume(wc)
	var all semWidgetList
	must(ctrl.List(ctx, &all))
	fin := &all.Items[0]
	fin.Finalizers = []string{"example.opcheck.dev/cleanup"}
	must(ctrl.Update(ctx, fin))
	must(ctrl.Delete(ctx, fin, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	must(ctrl.Get(ctx, client.ObjectKeyFromObject(fin), fin))
	fin.Finalizers = []string{FinalizerForeground}
	must(ctrl.Update(ctx, fin))
	fin.Finalizers = nil
	must(ctrl.Update(ctx, fin))
	orig := all.Items[1].DeepCopy()
	all.Items[1].Spec.Tags = map[string]string{"a": "b"}
	must(ctrl.Patch(ctx, &all.Items[1], client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
	expect(user.Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "Bad"}}), apierrors.IsInvalid)
	zk := semSts("ns", "zk")
	zk.Status = appsv1.StatefulSetStatus{Replicas: 9}
	must(user.Create(ctx, zk))
	must(user.DeleteAllOf(ctx, &corev1.PersistentVolumeClaim{}, client.InNamespace("ns")))
}

// dumpStore renders every change of the store's history, objects included.
func dumpStore(t *testing.T, c *Cluster) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ch := range c.Store.History() {
		obj, err := json.Marshal(ch.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d %s %s %s %s\n", ch.Rev, ch.Type, ch.KindName(), ch.Key, obj)
	}
	return b.Bytes()
}

func TestDeterminismStore(t *testing.T) {
	a := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	b := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	determinismScript(t, a)
	determinismScript(t, b)
	da, db := dumpStore(t, a), dumpStore(t, b)
	if !bytes.Equal(da, db) {
		t.Fatalf("store histories differ:\n%s\n----\n%s", da, db)
	}
	la, lb := a.History.Lines(), b.History.Lines()
	if la != lb {
		t.Fatalf("history lines differ:\n%s\n----\n%s", la, lb)
	}
	// The run is not trivial: it saw generated names, UIDs, timestamps,
	// stale reads, conflicts and deletions.
	for _, want := range []string{`"name":"zk-`, `"uid":"`, `"creationTimestamp":"2026-01-01T00:00:01Z"`, `"deletionTimestamp":"2026-01-01T00:01:06Z"`, ` deleted `} {
		if !bytes.Contains(da, []byte(want)) {
			t.Errorf("store history lacks %q", want)
		}
	}
	for _, want := range []string{", stale)", `err="Conflict: `, `err="Invalid: `, "PatchStatus", "UpdateStatus", "DeleteAllOf"} {
		if !strings.Contains(la, want) {
			t.Errorf("history lines lack %q", want)
		}
	}
	if a.Store.Revision() < 40 {
		t.Fatalf("script made only %d revisions", a.Store.Revision())
	}
	// A different script gives a different history: the comparison can fail.
	d := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	d.Clock.Advance(model.FromDuration(time.Second))
	determinismScript(t, d)
	if bytes.Equal(dumpStore(t, d), da) {
		t.Fatal("a shifted clock left the store history unchanged")
	}
}
