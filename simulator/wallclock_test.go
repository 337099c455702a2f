package simulator

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// clockReader reads time.Now at every reconcile and requeues after 10 s.
type clockReader struct {
	c   client.Client
	now *[]time.Time
}

func (r *clockReader) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	_ = r.c.Get(ctx, req.NamespacedName, &cm)
	*r.now = append(*r.now, time.Now())
	return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
}

func clockScenario(sync bool, now *[]time.Time) *Scenario {
	return &Scenario{
		Name: "wallclock", Scheme: NewScheme(), NoBuiltins: true, SyncWallClock: sync,
		Objects:     []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}},
		Controllers: []ControllerSpec{{Name: "clock", For: &corev1.ConfigMap{}, New: func(c client.Client) reconcile.Reconciler { return &clockReader{c: c, now: now} }}},
		QuietPeriod: model.FromDuration(60 * time.Second),
	}
}

// With SyncWallClock, time.Now in the reconciler moves exactly with the
// logical clock (each run in a synctest bubble of its own, entered by Run);
// without it, it is the real clock, which barely moves in a run.
func TestSyncWallClockFollowsLogicalClock(t *testing.T) {
	var synced, real []time.Time
	if _, err := Run(clockScenario(true, &synced), &model.Sequence{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(synced) < 4 {
		t.Fatalf("%d reconciles", len(synced))
	}
	for i := 1; i < len(synced); i++ {
		if d := synced[i].Sub(synced[i-1]); d != 10*time.Second {
			t.Fatalf("reconcile %d: time.Now moved %s since the previous one, want the 10 s of logical time", i, d)
		}
	}
	if _, err := Run(clockScenario(false, &real), &model.Sequence{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := real[len(real)-1].Sub(real[0]); d >= 10*time.Second {
		t.Fatalf("without SyncWallClock time.Now moved %s over the run: the real clock should barely move", d)
	}
}
