package simulator

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// contextReader notes, at each reconcile, whether its context's logger
// discards and which reconcile run the context names.
type contextReader struct {
	discards []bool
	runs     []*reconcileRun
}

func (r *contextReader) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	r.discards = append(r.discards, log.FromContext(ctx).GetSink() == nil)
	r.runs = append(r.runs, runFromContext(ctx))
	return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
}

// TestReconcileContextIsItsOwn: every reconcile's context carries a
// logger that discards and names that reconcile's own run, though the
// logger's context is shared by all of them.
func TestReconcileContextIsItsOwn(t *testing.T) {
	rec := &contextReader{}
	sc := &Scenario{
		Name: "context", Scheme: NewScheme(), NoBuiltins: true,
		Objects:     []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}},
		Controllers: []ControllerSpec{{Name: "context", For: &corev1.ConfigMap{}, New: func(client.Client) reconcile.Reconciler { return rec }}},
		QuietPeriod: model.FromDuration(60 * time.Second),
	}
	if _, err := Run(sc, &model.Sequence{}, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(rec.runs) < 3 {
		t.Fatalf("%d reconciles, want several", len(rec.runs))
	}
	seen := map[*reconcileRun]bool{}
	for i, run := range rec.runs {
		if !rec.discards[i] {
			t.Fatalf("reconcile %d: its context's logger does not discard", i)
		}
		if run == nil || seen[run] {
			t.Fatalf("reconcile %d: its context names run %p, nil or an earlier reconcile's", i, run)
		}
		seen[run] = true
	}
}
