package properties

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/opcheck/opcheck/model"
)

// quorumHistory: every read is served at the head revision.
func quorumHistory() *builder {
	b := &builder{}
	b.op(ctrl, model.OpGet, "ConfigMap", "zk", "NotFound: configmaps \"zk\" not found")
	b.create(model.ActorUser, "ConfigMap", cr("zk", 1))                              // rev 1
	b.get(ctrl, "ConfigMap", "zk", 1, 1, 1)                                          // sees 1
	b.create(model.ActorStatefulSet, "PersistentVolumeClaim", pvc("data-zk-0", app)) // rev 2
	b.update(model.ActorUser, "ConfigMap", cr("zk", 2))                              // rev 3
	b.get(ctrl, "ConfigMap", "zk", 3, 3, 2)
	b.next(model.Event{Actor: ctrl, Op: model.OpList, Kind: "PersistentVolumeClaim", Namespace: ns, Server: 1, ReadRev: 3,
		Versions: []model.Version{{Name: "default/data-zk-0", Rev: 2}}})
	b.remove(ctrl, "PersistentVolumeClaim", pvc("data-zk-0", app)) // rev 4
	b.op(ctrl, model.OpGet, "PersistentVolumeClaim", "data-zk-0", "NotFound: gone")
	b.op(ctrl, model.OpUpdate, "ConfigMap", "zk", "Conflict: the object has been modified") // ignored
	return b
}

func TestLinearizableSequentialQuorumOk(t *testing.T) {
	b := quorumHistory()
	res := CheckLinearizable(&b.h, nil)
	require.Equal(t, porcupine.Ok, res.Result)
	require.Empty(t, res.StaleReads)
	require.Equal(t, []PartitionResult{
		{Key: "ConfigMap default/zk", Result: porcupine.Ok, Ops: 5},
		{Key: "PersistentVolumeClaim default/data-zk-0", Result: porcupine.Ok, Ops: 4},
	}, res.Partitions)
	require.Empty(t, Check(&b.h, Linearizable("Linearizable(all)", nil)))
}

func TestLinearizableStaleReadIllegal(t *testing.T) {
	b := quorumHistory()
	// apiserver-2's cache is stuck at revision 1: it serves rv 1 of the CR
	// after rv 3 was committed, and still lists the deleted PVC.
	stale := b.get(ctrl, "ConfigMap", "zk", 1, 1, 2)
	list := b.next(model.Event{Actor: ctrl, Op: model.OpList, Kind: "PersistentVolumeClaim", Namespace: ns, Server: 2, ReadRev: 2,
		Versions: []model.Version{{Name: "default/data-zk-0", Rev: 2}}, Stale: true}).Step
	b.op(model.ActorUser, model.OpGet, "ConfigMap", "zk", "NotFound: not there") // the user's read is stale too

	res := CheckLinearizable(&b.h, func(a model.Actor) bool { return a == ctrl })
	require.Equal(t, porcupine.Illegal, res.Result)
	require.Equal(t, []StaleRead{
		{Step: stale, Actor: ctrl, Op: model.OpGet, Key: "ConfigMap default/zk", Server: 2, ReadRev: 1, HeadRev: 4, SawRV: 1, CommittedRV: 3},
		{Step: list, Actor: ctrl, Op: model.OpList, Key: "PersistentVolumeClaim default/data-zk-0", Server: 2, ReadRev: 2, HeadRev: 4, SawRV: 2, CommittedRV: 0},
	}, res.StaleReads)
	require.Equal(t, porcupine.Illegal, res.Partitions[0].Result)
	require.Equal(t, porcupine.Illegal, res.Partitions[1].Result)
	require.Equal(t, "step 11: controller/zk Get ConfigMap default/zk saw rv=1 but rv=3 was committed (apiserver-2, cache at rev 1, head at rev 4)",
		res.StaleReads[0].String())

	// All actors: the user's NotFound is a third stale read.
	all := CheckLinearizable(&b.h, nil)
	require.Len(t, all.StaleReads, 3)
	require.Equal(t, model.ActorUser, all.StaleReads[2].Actor)
	require.Equal(t, model.Revision(0), all.StaleReads[2].SawRV)

	// Only the user's reads: the CR partition is Illegal, the PVC one Ok.
	user := CheckLinearizable(&b.h, func(a model.Actor) bool { return a == model.ActorUser })
	require.Equal(t, porcupine.Illegal, user.Result)
	require.Equal(t, porcupine.Illegal, user.Partitions[0].Result)
	require.Equal(t, porcupine.Ok, user.Partitions[1].Result)

	// A filter that accepts no reader leaves only writes: Ok.
	none := CheckLinearizable(&b.h, func(model.Actor) bool { return false })
	require.Equal(t, porcupine.Ok, none.Result)
	require.Empty(t, none.StaleReads)

	vs := Check(&b.h, Linearizable("Linearizable(controller)", func(a model.Actor) bool { return a == ctrl }))
	require.Len(t, vs, 1)
	require.Equal(t, stale, vs[0].Step)
	require.Equal(t, model.OpGet, vs[0].Event.Op)
	require.Equal(t, []int{list}, vs[0].Related)
	require.Contains(t, vs[0].Explanation, "2 of 2 objects are not linearizable registers; 2 stale read(s)")
	require.Contains(t, vs[0].Explanation, "saw rv=2 but absent was committed")
}

func TestLinearizableReadBeforeCreate(t *testing.T) {
	// A cache that has seen a write the store has not: impossible in a
	// correct store, and caught (the register starts absent).
	b := &builder{}
	b.get(ctrl, "ConfigMap", "zk", 1, 1, 1)
	b.create(model.ActorUser, "ConfigMap", cr("zk", 1))
	res := CheckLinearizable(&b.h, nil)
	require.Equal(t, porcupine.Illegal, res.Result)
	require.Equal(t, 1, res.StaleReads[0].Step)
}

func TestWriteVisualization(t *testing.T) {
	b := quorumHistory()
	b.next(model.Event{Actor: model.ActorFault, Op: model.OpPauseCache, Detail: "apiserver-2 ConfigMap"})
	b.get(ctrl, "ConfigMap", "zk", 1, 1, 2)
	b.next(model.Event{Actor: model.ActorFault, Op: model.OpCrash, Detail: "controller/zk"})

	var buf bytes.Buffer
	require.NoError(t, WriteVisualization(&buf, &b.h, nil, true))
	html := buf.String()
	require.True(t, strings.HasPrefix(strings.TrimSpace(html), "<!DOCTYPE html>") || strings.Contains(html, "<html"))
	require.Contains(t, html, "ConfigMap default/zk")
	require.Contains(t, html, "PersistentVolumeClaim default/data-zk-0")
	require.Contains(t, html, "PauseCache apiserver-2 ConfigMap")
	require.Contains(t, html, "faults")

	buf.Reset()
	require.NoError(t, WriteVisualization(&buf, &b.h, nil, false))
	require.NotContains(t, buf.String(), "PauseCache apiserver-2 ConfigMap")
	require.Contains(t, buf.String(), "ConfigMap default/zk")
}
