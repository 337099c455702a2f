package properties

import (
	"testing"

	"github.com/opcheck/opcheck/model"
)

// BenchmarkRunObserve measures the online cost per event of the generic
// properties over a history of reconciles, stale reads and writes.
func BenchmarkRunObserve(b *testing.B) {
	hb := zkBase()
	for i := 0; i < 200; i++ {
		hb.get(ctrl, "ConfigMap", "zk", 3, 2, 2)
		reconcileOnce(hb, "")
		hb.update(ctrl, "ConfigMap", cr("zk", 2))
	}
	hb.op(model.ActorClock, model.OpSettle, "", "", "")
	props := []Property{memberPVC(), stsDesired(), converged(), NoStuckReconcile(3), NoReconcilePanic(), NoEndlessReconcile()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewRun(props...)
		for j := range hb.h.Events {
			r.Observe(&hb.h.Events[j])
		}
		r.Finish(&hb.h)
	}
	b.ReportMetric(float64(len(hb.h.Events)), "events/op")
}
