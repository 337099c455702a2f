package simulator_test

import (
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// TestReconcileWorkersEndWithTheRun: a host runs its reconciles on one
// reused goroutine; whichever way reconciles end (return, panic, call
// budget, crash) and wherever the run stops, no goroutine of the run
// outlives it. Each run is inside a synctest bubble, and synctest.Test
// fails when a goroutine started in the bubble is still blocked at the
// end. Each scenario's history must also show the reconciles the
// surviving worker ran after the first one.
func TestReconcileWorkersEndWithTheRun(t *testing.T) {
	crash := func() *simulator.Scenario {
		return &simulator.Scenario{
			Name:    "crash",
			Scheme:  webScheme,
			Objects: []client.Object{&WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}, Spec: WebAppSpec{Replicas: 1}}},
			Controllers: []simulator.ControllerSpec{{
				Name: "two", For: &WebApp{},
				New: func(c client.Client) reconcile.Reconciler { return &twoWrites{c: c} },
			}},
			Faults: model.FaultBudget{Crashes: 1},
		}
	}
	cases := []struct {
		name   string
		sc     func() *simulator.Scenario
		script []simulator.ScriptStep
		actor  model.Actor
		ends   model.Op // how the reconciles end, at least twice
	}{
		{name: "panics", sc: func() *simulator.Scenario {
			return misbehavingScenario("panicky", func(c client.Client) reconcile.Reconciler { return &panicky{c: c} }, 0)
		}, actor: "controller/panicky", ends: model.OpPanic},
		{name: "over budget", sc: func() *simulator.Scenario {
			return misbehavingScenario("endless", func(c client.Client) reconcile.Reconciler { return &endless{c: c} }, 10)
		}, actor: "controller/endless", ends: model.OpStepBudget},
		{name: "crash mid-reconcile", sc: crash, script: []simulator.ScriptStep{
			{After: "Create ConfigMap default/a", Label: "crash controller/two, restart on apiserver-1"},
		}, actor: "controller/two", ends: model.OpReconcileDone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res, _ := runScripted(t, tc.sc(), tc.script, simulator.RunOptions{})
				n := 0
				for i := range res.History.Events {
					if e := &res.History.Events[i]; e.Actor == tc.actor && e.Op == tc.ends {
						n++
					}
				}
				if n < 2 && tc.ends != model.OpReconcileDone {
					t.Fatalf("%d reconciles of %s ended with %s, want at least 2:\n%s", n, tc.actor, tc.ends, res.History.Lines())
				}
				if n < 1 {
					t.Fatalf("no reconcile of %s ended with %s:\n%s", tc.actor, tc.ends, res.History.Lines())
				}
			})
		})
	}
	// A run that stops at its step bound with a reconcile parked at an API
	// call: the reconcile is unwound and its worker ends with the run too.
	t.Run("stopped mid-reconcile", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sc := misbehavingScenario("endless", func(c client.Client) reconcile.Reconciler { return &endless{c: c} }, 0)
			sc.MaxSteps = 6
			res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
			started, ended := 0, 0
			for i := range res.History.Events {
				switch e := &res.History.Events[i]; {
				case e.Actor == "controller/endless" && e.Op == model.OpReconcile:
					started++
				case e.Actor == "controller/endless" && (e.Op == model.OpReconcileDone || e.Op == model.OpStepBudget):
					ended++
				}
			}
			if started != 1 || ended != 0 {
				t.Fatalf("%d reconciles started and %d ended, want one still in flight when the run stopped:\n%s", started, ended, res.History.Lines())
			}
		})
	})
}
