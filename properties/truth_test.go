package properties

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

func names(objs []runtime.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolumeClaim:
			out[i] = o.Namespace + "/" + o.Name
		case *corev1.ConfigMap:
			out[i] = o.Namespace + "/" + o.Name
		}
	}
	return out
}

func TestStateApplyGetListRevision(t *testing.T) {
	var b builder
	app := map[string]string{"app": "zk"}
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-1", app))                // rev 1
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-0", app))                // rev 2
	b.create(model.ActorUser, "PersistentVolumeClaim", pvc("other", map[string]string{"app": "x"})) // rev 3
	b.create(model.ActorUser, "ConfigMap", cr("zk", 2))                                             // rev 4
	b.get(ctrl, "ConfigMap", "zk", 4, 4, 1)                                                         // no change
	other := pvc("data-zk-9", app)
	other.Namespace = "elsewhere"
	b.create(model.ActorUser, "PersistentVolumeClaim", other)      // rev 5
	b.update(model.ActorUser, "ConfigMap", cr("zk", 1))            // rev 6
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-1", app)) // rev 7

	s := NewState()
	for i := range b.h.Events {
		s.Apply(&b.h.Events[i])
	}
	require.Equal(t, model.Revision(7), s.Revision())
	require.Equal(t, 8, s.Step())
	require.Equal(t, 4, s.Len())

	obj, ok := s.Get("ConfigMap", ns, "zk")
	require.True(t, ok)
	require.Equal(t, "1", obj.(*corev1.ConfigMap).Data["replicas"])
	require.Equal(t, "6", rvOf(obj))
	_, ok = s.Get("PersistentVolumeClaim", ns, "data-zk-1")
	require.False(t, ok, "deleted object must be gone")
	_, ok = s.Get("ConfigMap", "elsewhere", "zk")
	require.False(t, ok)

	sel := labels.SelectorFromSet(app)
	require.Equal(t, []string{"default/data-zk-0"}, names(s.List("PersistentVolumeClaim", ns, sel)))
	require.Equal(t, []string{"default/data-zk-0", "elsewhere/data-zk-9"}, names(s.List("PersistentVolumeClaim", "", sel)))
	require.Equal(t, []string{"default/data-zk-0", "default/other", "elsewhere/data-zk-9"}, names(s.List("PersistentVolumeClaim", "", nil)))
	require.Empty(t, s.List("PersistentVolumeClaim", ns, labels.Nothing()))
	require.Empty(t, s.List("Pod", "", nil))

	// Replay to an earlier step sees the earlier state.
	at4 := Replay(&b.h, 4)
	require.Equal(t, model.Revision(4), at4.Revision())
	obj, _ = at4.Get("ConfigMap", ns, "zk")
	require.Equal(t, "2", obj.(*corev1.ConfigMap).Data["replicas"])
	require.Equal(t, []string{"default/data-zk-0", "default/data-zk-1"}, names(at4.List("PersistentVolumeClaim", ns, sel)))
	require.Equal(t, s.Revision(), Replay(&b.h, -1).Revision())
}

func TestStateFinalizerDeleteFlow(t *testing.T) {
	var b builder
	p := pvc("data-zk-1", nil)
	p.Finalizers = []string{"kubernetes.io/pvc-protection"}
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", p)
	term := p.DeepCopy()
	now := metav1.NewTime(model.Time(100).Wall())
	term.DeletionTimestamp = &now
	b.write(ctrl, model.OpDelete, "PersistentVolumeClaim", term, model.ChangeModified)
	s := Replay(&b.h, -1)
	obj, ok := s.Get("PersistentVolumeClaim", ns, "data-zk-1")
	require.True(t, ok, "a delete of an object with finalizers only marks it")
	require.NotNil(t, obj.(*corev1.PersistentVolumeClaim).DeletionTimestamp)
	gone := term.DeepCopy()
	gone.Finalizers = nil
	b.write(model.ActorPVCProtection, model.OpUpdate, "PersistentVolumeClaim", gone, model.ChangeDeleted)
	s = Replay(&b.h, -1)
	_, ok = s.Get("PersistentVolumeClaim", ns, "data-zk-1")
	require.False(t, ok)
	require.Equal(t, 0, s.Len())
}

func TestStateApplyPanicsOnChangeWithoutObject(t *testing.T) {
	s := NewState()
	require.Panics(t, func() {
		s.Apply(&model.Event{Step: 3, Op: model.OpCreate, Kind: "Pod", Name: "p", Change: model.ChangeAdded})
	})
}

func TestStateApplyIsCheap(t *testing.T) {
	// Apply must not copy the store: a modification applied to a store of
	// 20k objects allocates at most its key string (namespace/name), not a
	// copy of any map. Counted allocations, not wall-clock time, so the
	// test says the same on a loaded machine.
	s := NewState()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}}
	e := model.Event{Op: model.OpCreate, Kind: "ConfigMap", Namespace: ns, Change: model.ChangeAdded, Object: cm}
	for i := 0; i < 20000; i++ {
		e.Name = "cm-" + strconv.Itoa(i)
		e.Rev++
		s.Apply(&e)
	}
	e.Change = model.ChangeModified
	e.Name = "cm-5"
	allocs := testing.AllocsPerRun(1000, func() {
		e.Rev++
		s.Apply(&e)
	})
	require.LessOrEqual(t, allocs, 1.0, "allocations per Apply of a modification on a 20k-object store")
	require.Equal(t, 20000, s.Len())
}
