package properties

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/opcheck/opcheck/model"
)

// The fault log keeps one in-flight record per controller and one latest
// stale read, reused from event to event: a crash names the reconcile it
// interrupted, never an earlier one of the same controller, and nothing
// once the reconcile ended or an earlier crash ended it; the stale read
// described is the latest, a List named by its kind and namespace.
func TestFaultLogReusedRecordsDescribeTheLatest(t *testing.T) {
	var b builder
	b.create(model.ActorUser, "ConfigMap", cr("zk", 1))
	b.op(ctrl, model.OpReconcile, "ConfigMap", "first", "")
	b.get(ctrl, "ConfigMap", "first", 1, 0, 1) // stale
	b.update(ctrl, "ConfigMap", cr("zk", 2))
	b.op(ctrl, model.OpReconcileDone, "ConfigMap", "first", "")
	idle := b.next(model.Event{Actor: model.ActorFault, Op: model.OpCrash, Name: string(ctrl)}).Step
	b.get(ctrl, "ConfigMap", "zk", 2, 2, 1) // between reconciles: not counted as a call
	rec := b.op(ctrl, model.OpReconcile, "ConfigMap", "zk", "")
	upd := b.update(ctrl, "ConfigMap", cr("zk", 3))
	crash := b.next(model.Event{Actor: model.ActorFault, Op: model.OpCrash, Name: string(ctrl)}).Step
	again := b.next(model.Event{Actor: model.ActorFault, Op: model.OpCrash, Name: string(ctrl)}).Step
	list := b.next(model.Event{Actor: ctrl, Op: model.OpList, Kind: "ConfigMap", Namespace: ns, Server: 2, ReadRev: 1, HeadRev: 3, Stale: true}).Step

	var f faultLog
	s := NewState()
	for i := range b.h.Events {
		f.observe(s, &b.h.Events[i])
		s.Apply(&b.h.Events[i])
	}
	got := f.explain()
	for _, want := range []string{
		"Faults injected (3):",
		fmt.Sprintf("step %d: crash of controller/zk between reconciles", idle),
		fmt.Sprintf("step %d: crash of controller/zk in its reconcile of ConfigMap default/zk begun at step %d, after API call 1 (Update ConfigMap default/zk at step %d)", crash, rec, upd),
		fmt.Sprintf("step %d: crash of controller/zk between reconciles", again),
		fmt.Sprintf("Stale reads by controllers: 2; the latest at step %d: List ConfigMap in namespace default, served by apiserver-2 from a watch cache at revision 1", list),
	} {
		require.Contains(t, got, want)
	}
}
