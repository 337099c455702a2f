package properties

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

const (
	ctrl = model.Actor("controller/zk")
	ns   = "default"
)

// builder appends events to a history the way the simulator would: steps
// from 1, one store revision per change, the head revision recorded on
// every event, logical time moving 100ms per step.
type builder struct {
	h    model.History
	head model.Revision
}

func (b *builder) next(e model.Event) *model.Event {
	e.Step = len(b.h.Events) + 1
	e.Time = model.Time(100 * e.Step)
	if e.HeadRev == 0 {
		e.HeadRev = b.head
	}
	b.h.Events = append(b.h.Events, e)
	return &b.h.Events[len(b.h.Events)-1]
}

// write commits obj (a copy, with its resourceVersion set) with a change.
func (b *builder) write(actor model.Actor, op model.Op, kind string, obj runtime.Object, change model.ChangeType) int {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	b.head++
	m.SetResourceVersion(b.head.String())
	e := b.next(model.Event{Actor: actor, Op: op, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(),
		Server: 1, HeadRev: b.head - 1, Rev: b.head, Change: change, Object: obj})
	return e.Step
}

func (b *builder) create(actor model.Actor, kind string, obj runtime.Object) int {
	return b.write(actor, model.OpCreate, kind, obj, model.ChangeAdded)
}

func (b *builder) update(actor model.Actor, kind string, obj runtime.Object) int {
	return b.write(actor, model.OpUpdate, kind, obj, model.ChangeModified)
}

func (b *builder) remove(actor model.Actor, kind string, obj runtime.Object) int {
	return b.write(actor, model.OpDelete, kind, obj, model.ChangeDeleted)
}

// get records a Get that returned rv, served from a cache at readRev.
func (b *builder) get(actor model.Actor, kind, name string, rv, readRev model.Revision, server int) int {
	return b.next(model.Event{Actor: actor, Op: model.OpGet, Kind: kind, Namespace: ns, Name: name,
		Server: server, ReadRev: readRev, Rev: rv, Stale: readRev < b.head}).Step
}

func (b *builder) op(actor model.Actor, op model.Op, kind, name, errText string) int {
	return b.next(model.Event{Actor: actor, Op: op, Kind: kind, Namespace: ns, Name: name, Err: errText}).Step
}

// cr is the stand-in custom resource: a ConfigMap with data.replicas.
func cr(name string, replicas int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data:       map[string]string{"replicas": strconv.Itoa(replicas)},
	}
}

func pvc(name string, lbls map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls}}
}

func sts(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec:       appsv1.StatefulSetSpec{Replicas: &replicas},
	}
}

// crReplicas reads the stand-in CR's desired size from the state.
func crReplicas(s *State, name string) (int, bool) {
	obj, ok := s.Get("ConfigMap", ns, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(obj.(*corev1.ConfigMap).Data["replicas"])
	return n, err == nil
}

func rvOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return m.GetResourceVersion()
}
