package simulator

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// TestStaleness pauses one type's watch cache on apiserver-2 and shows what
// a controller talking to it sees: stale reads of that type, fresh reads of
// the other, writes linearized at the store, and conflicts for writes built
// from the stale view.
func TestStaleness(t *testing.T) {
	ctx := context.Background()
	c := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	user := c.Client(model.ActorUser, 1, true)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	w := newSemWidget("ns", "zk", 1)
	must(user.Create(ctx, w)) // rev 1
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-zk-0"}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	must(user.Create(ctx, pvc)) // rev 2

	s2 := c.Server(2)
	wc, err := s2.CacheFor(&semWidget{})
	must(err)
	pc, err := s2.CacheFor(&corev1.PersistentVolumeClaim{})
	must(err)
	s2.Pause(wc)
	if !wc.Paused() || pc.Paused() || wc.Rev() != 2 {
		t.Fatalf("caches: widget paused=%v rev=%d, pvc paused=%v", wc.Paused(), wc.Rev(), pc.Paused())
	}

	// Writes through apiserver-2 go to the head, paused cache or not.
	q2 := c.Client("ctrl", 2, true)
	fresh := &semWidget{}
	must(q2.Get(ctx, client.ObjectKeyFromObject(w), fresh))
	fresh.Spec.Size = 3
	must(q2.Update(ctx, fresh)) // rev 3
	if fresh.ResourceVersion != "3" || c.Store.Revision() != 3 {
		t.Fatalf("write through apiserver-2: rv %s head %d", fresh.ResourceVersion, c.Store.Revision())
	}
	pvc.Labels = map[string]string{"owner": "zk"}
	must(q2.Update(ctx, pvc)) // rev 4

	// Cached reads through apiserver-2: the CR is old, the PVC is new.
	cached := c.Client("ctrl", 2, false)
	stale := &semWidget{}
	must(cached.Get(ctx, client.ObjectKeyFromObject(w), stale))
	if stale.Spec.Size != 1 || stale.ResourceVersion != "1" {
		t.Fatalf("paused cache served size %d rv %s, want the old view", stale.Spec.Size, stale.ResourceVersion)
	}
	ev := c.History.Events[len(c.History.Events)-1]
	if !ev.Stale || ev.ReadRev != 2 || ev.HeadRev != 4 || ev.Server != 2 {
		t.Fatalf("stale read event: %s", ev.Line())
	}
	var wl semWidgetList
	must(cached.List(ctx, &wl))
	if len(wl.Items) != 1 || wl.Items[0].Spec.Size != 1 || wl.ResourceVersion != "2" {
		t.Fatalf("paused cache list: %+v rv %s", wl.Items, wl.ResourceVersion)
	}
	if ev := c.History.Events[len(c.History.Events)-1]; !ev.Stale {
		t.Fatalf("stale list not marked: %s", ev.Line())
	}
	gotPVC := &corev1.PersistentVolumeClaim{}
	must(cached.Get(ctx, client.ObjectKeyFromObject(pvc), gotPVC))
	if gotPVC.Labels["owner"] != "zk" || gotPVC.ResourceVersion != "4" {
		t.Fatalf("following PVC cache served %v rv %s", gotPVC.Labels, gotPVC.ResourceVersion)
	}
	if ev := c.History.Events[len(c.History.Events)-1]; ev.Stale || ev.ReadRev != 4 {
		t.Fatalf("fresh read event: %s", ev.Line())
	}

	// A write built from the stale read is refused.
	stale.Spec.Size = 2
	err = cached.Update(ctx, stale)
	if !apierrors.IsConflict(err) {
		t.Fatalf("update from a stale read: %v", err)
	}
	if c.Store.Revision() != 4 {
		t.Fatalf("conflicting write changed the store: head %d", c.Store.Revision())
	}
	// So is a delete with the stale resourceVersion as its precondition.
	rv := stale.ResourceVersion
	if err := cached.Delete(ctx, stale, client.Preconditions{ResourceVersion: &rv}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a stale resourceVersion precondition: %v", err)
	}

	// No read-your-writes: the cached client's own successful write is not
	// visible to its next read while the cache is paused.
	mine := &semWidget{}
	must(q2.Get(ctx, client.ObjectKeyFromObject(w), mine))
	mine.Spec.Owner = "ctrl"
	must(cached.Update(ctx, mine)) // rev 5, head now 5
	back := &semWidget{}
	must(cached.Get(ctx, client.ObjectKeyFromObject(w), back))
	if back.Spec.Owner != "" || back.ResourceVersion != "1" {
		t.Fatalf("paused cache served the client's own write: owner %q rv %s", back.Spec.Owner, back.ResourceVersion)
	}

	// apiserver-1 serves the fresh CR from its cache.
	one := &semWidget{}
	must(c.Client("ctrl", 1, false).Get(ctx, client.ObjectKeyFromObject(w), one))
	if one.Spec.Size != 3 || one.Spec.Owner != "ctrl" || one.ResourceVersion != "5" {
		t.Fatalf("apiserver-1 served size %d rv %s", one.Spec.Size, one.ResourceVersion)
	}

	// Objects created while paused are invisible to the paused cache.
	must(user.Create(ctx, newSemWidget("ns", "late", 1))) // rev 6
	if err := cached.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "late"}, &semWidget{}); !apierrors.IsNotFound(err) {
		t.Fatalf("paused cache knows a later object: %v", err)
	}
	if ev := c.History.Events[len(c.History.Events)-1]; !ev.Stale {
		t.Fatalf("stale NotFound not marked: %s", ev.Line())
	}
	if n := s2.Pending(wc); n != 3 {
		t.Fatalf("pending widget events %d, want 3", n)
	}

	// After Resume the cache catches up at the next read.
	s2.Resume(wc)
	again := &semWidget{}
	must(cached.Get(ctx, client.ObjectKeyFromObject(w), again))
	if again.Spec.Size != 3 || again.ResourceVersion != "5" || wc.Rev() != c.Store.Revision() || s2.Pending(wc) != 0 {
		t.Fatalf("after resume: size %d rv %s cache rev %d", again.Spec.Size, again.ResourceVersion, wc.Rev())
	}
	if ev := c.History.Events[len(c.History.Events)-1]; ev.Stale {
		t.Fatalf("read after resume marked stale: %s", ev.Line())
	}
	must(cached.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "late"}, &semWidget{}))
	again.Spec.Size = 4
	must(cached.Update(ctx, again))
}

// TestStalenessStepwise advances a cache event by event without AutoSync.
func TestStalenessStepwise(t *testing.T) {
	ctx := context.Background()
	c := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	user := c.Client(model.ActorUser, 1, true)
	s2 := c.Server(2)
	s2.AutoSync = false
	wc, err := s2.CacheFor(&semWidget{})
	if err != nil {
		t.Fatal(err)
	}
	w := newSemWidget("ns", "w", 0)
	if err := user.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	for i := int32(1); i <= 3; i++ {
		w.Spec.Size = i
		if err := user.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	cached := c.Client("ctrl", 2, false)
	if err := cached.Get(ctx, client.ObjectKeyFromObject(w), &semWidget{}); !apierrors.IsNotFound(err) {
		t.Fatalf("cache before any advance: %v", err)
	}
	for want := int32(0); want <= 3; want++ {
		if !s2.AdvanceOne(wc) {
			t.Fatalf("no event to advance to size %d", want)
		}
		got := &semWidget{}
		if err := cached.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Size != want || wc.Rev() != model.Revision(want+1) {
			t.Fatalf("step %d: size %d cache rev %d", want, got.Spec.Size, wc.Rev())
		}
	}
	if s2.AdvanceOne(wc) || s2.Pending(wc) != 0 {
		t.Fatal("events left after the last one")
	}
	// Sync applies everything pending, paused or not.
	s2.Pause(wc)
	if err := user.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	if n := s2.Sync(wc); n != 1 {
		t.Fatalf("sync applied %d events, want 1", n)
	}
	if err := cached.Get(ctx, client.ObjectKeyFromObject(w), &semWidget{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after syncing the delete: %v", err)
	}
}

// TestWatchWindow: a watch resuming from a revision older than the cache's
// retained window gets 410 Gone; within the window it gets the events.
func TestWatchWindow(t *testing.T) {
	ctx := context.Background()
	c := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	user := c.Client(model.ActorUser, 1, true)
	s1 := c.Server(1)
	s1.Window = 2
	wc, err := s1.CacheFor(&semWidget{})
	if err != nil {
		t.Fatal(err)
	}
	w := newSemWidget("ns", "w", 0)
	if err := user.Create(ctx, w); err != nil { // rev 1
		t.Fatal(err)
	}
	if err := user.Create(ctx, semCM("ns", "other", nil)); err != nil { // rev 2: another kind
		t.Fatal(err)
	}
	for i := int32(1); i <= 3; i++ { // revs 3, 4, 5
		w.Spec.Size = i
		if err := user.Update(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	// Widget events: 1, 3, 4, 5. Retained: 4, 5.
	for _, from := range []model.Revision{0, 1, 2} {
		_, err := s1.Watch(wc, from)
		if !apierrors.IsResourceExpired(err) || errStatusCode(err) != http.StatusGone {
			t.Fatalf("watch from %d: %v", from, err)
		}
	}
	for _, tc := range []struct {
		from model.Revision
		want []model.Revision
	}{{3, []model.Revision{4, 5}}, {4, []model.Revision{5}}, {5, nil}, {9, nil}} {
		evs, err := s1.Watch(wc, tc.from)
		if err != nil {
			t.Fatalf("watch from %d: %v", tc.from, err)
		}
		if len(evs) != len(tc.want) {
			t.Fatalf("watch from %d: %d events, want %v", tc.from, len(evs), tc.want)
		}
		for i, ev := range evs {
			if ev.Rev != tc.want[i] || ev.KindName() != "Widget" {
				t.Fatalf("watch from %d: event %d at rev %d (%s)", tc.from, i, ev.Rev, ev.KindName())
			}
		}
	}
	// A watch on apiserver-2 with the default window is served from 0.
	wc2, err := c.Server(2).CacheFor(&semWidget{})
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := c.Server(2).Watch(wc2, 0); err != nil || len(evs) != 4 {
		t.Fatalf("default window: %d events, %v", len(evs), err)
	}
	// A paused cache's watch ends at the cache's revision.
	c.Server(2).Pause(wc2)
	w.Spec.Size = 9
	if err := user.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	if evs, err := c.Server(2).Watch(wc2, 5); err != nil || len(evs) != 0 {
		t.Fatalf("paused watch: %d events, %v", len(evs), err)
	}
}
