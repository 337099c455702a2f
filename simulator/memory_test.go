package simulator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// memoryOf replays calls into a fresh digest: each call is an event, and
// an object (when not nil) the answer it carries. Contents hash by the
// ConfigMap's data, as the world's content hash would tell them apart.
func memoryOf(calls ...memoryCall) *reconcilerMemory {
	m := &reconcilerMemory{sources: &memorySources{
		content:   func(o client.Object) uint64 { return uint64(len(o.(*corev1.ConfigMap).Data["v"])) + 1 },
		externals: func() uint64 { return 7 },
	}}
	for _, c := range calls {
		if c.answer != nil {
			m.answer(c.answer)
		}
		e := c.event
		m.observe(&e)
	}
	return m
}

type memoryCall struct {
	event  model.Event
	answer client.Object
}

func configMap(v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}, Data: map[string]string{"v": v}}
}

// The digest of a controller that keeps memory (reconcilerMemory): reads
// between two other events count in any order (KubeRay reads in Go map
// order), other events in order, and a read's answer by its content, not
// only by the resourceVersion the event shows.
func TestMemoryDigest(t *testing.T) {
	get := func(name string, rev model.Revision) model.Event {
		return model.Event{Op: model.OpGet, Kind: "ConfigMap", Namespace: "default", Name: name, Rev: rev}
	}
	update := func(name string) model.Event {
		return model.Event{Op: model.OpUpdate, Kind: "ConfigMap", Namespace: "default", Name: name, Rev: 9}
	}
	a, b := get("a", 1), get("b", 2)
	ab := memoryOf(memoryCall{event: a}, memoryCall{event: b}, memoryCall{event: update("a")})
	ba := memoryOf(memoryCall{event: b}, memoryCall{event: a}, memoryCall{event: update("a")})
	if ab.digest() != ba.digest() {
		t.Errorf("two reads in either order give different digests")
	}
	writes := memoryOf(memoryCall{event: update("a")}, memoryCall{event: update("b")})
	swapped := memoryOf(memoryCall{event: update("b")}, memoryCall{event: update("a")})
	if writes.digest() == swapped.digest() {
		t.Errorf("two writes in either order give the same digest")
	}
	readFirst := memoryOf(memoryCall{event: a}, memoryCall{event: update("a")})
	writeFirst := memoryOf(memoryCall{event: update("a")}, memoryCall{event: a})
	if readFirst.digest() == writeFirst.digest() {
		t.Errorf("a read before a write and after it give the same digest")
	}
	one := memoryOf(memoryCall{event: a, answer: configMap("x")})
	other := memoryOf(memoryCall{event: a, answer: configMap("xy")})
	if one.digest() == other.digest() {
		t.Errorf("the same Get answered with different contents gives the same digest")
	}
	later := a
	later.Time = 5
	if memoryOf(memoryCall{event: a}).digest() == memoryOf(memoryCall{event: later}).digest() {
		t.Errorf("the same Get at another time gives the same digest")
	}
	step := a
	step.Step, step.HeadRev, step.Server, step.Stale, step.ReadRev = 40, 12, 2, true, 11
	if memoryOf(memoryCall{event: a}).digest() != memoryOf(memoryCall{event: step}).digest() {
		t.Errorf("what the controller cannot see of a Get (its step, the store's head, the apiserver, staleness, the cache's revision) changed the digest")
	}
	list := model.Event{Op: model.OpList, Kind: "ConfigMap", Namespace: "default", ReadRev: 3}
	listLater := list
	listLater.ReadRev = 4
	if memoryOf(memoryCall{event: list}).digest() == memoryOf(memoryCall{event: listLater}).digest() {
		t.Errorf("two Lists at different revisions give the same digest: the list's resourceVersion is the revision")
	}
}
