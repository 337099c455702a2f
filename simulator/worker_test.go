package simulator_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// TestReconcileWorkersEndWithTheRun: a host runs its reconciles on one
// reused coroutine; whichever way reconciles end (return, panic, call
// budget, crash, the reconciler's own runtime.Goexit) and wherever the run
// stops, no goroutine of the run
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
		{name: "goexit", sc: func() *simulator.Scenario {
			return misbehavingScenario("quitter", func(c client.Client) reconcile.Reconciler { return &quitter{c: c} }, 0)
		}, actor: "controller/quitter", ends: model.OpPanic},
		{name: "over budget, recovering", sc: func() *simulator.Scenario {
			return misbehavingScenario("stubborn", func(c client.Client) reconcile.Reconciler { return &stubborn{c: c} }, 10)
		}, actor: "controller/stubborn", ends: model.OpStepBudget},
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

// quitter reads its WebApp and then ends its goroutine, as t.FailNow does.
type quitter struct{ c client.Client }

func (r *quitter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app WebApp
	if err := r.c.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, err
	}
	runtime.Goexit()
	return reconcile.Result{}, nil
}

// stubborn reads its WebApp 100 times, recovering every panic on the way
// (opcheck's unwinding included), and then returns success.
type stubborn struct{ c client.Client }

func (r *stubborn) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	for range 100 {
		func() {
			defer func() { _ = recover() }()
			var app WebApp
			_ = r.c.Get(ctx, req.NamespacedName, &app)
		}()
	}
	return reconcile.Result{}, nil
}

// recovering turns the panics of the reconciler it wraps into errors, as
// some operators' Reconcile does.
type recovering struct{ inner reconcile.Reconciler }

func (r recovering) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("recovered: %v", p)
		}
	}()
	return r.inner.Reconcile(ctx, req)
}

// A reconciler's own runtime.Goexit is a finding (the Panic event names
// it and the reconciler's frame), and the run goes on: later reconciles
// run on a new coroutine, and the workload step after it runs.
func TestReconcilerGoexitIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := misbehavingScenario("quitter", func(c client.Client) reconcile.Reconciler { return &quitter{c: c} }, 0)
		res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
		var panics []model.Event
		created := false
		for _, e := range res.History.Events {
			switch {
			case e.Actor == "controller/quitter" && e.Op == model.OpPanic:
				panics = append(panics, e)
			case e.Actor == model.ActorUser && e.Op == model.OpCreate && e.Name == "after":
				created = true
			}
		}
		if len(panics) < 2 || !created {
			t.Fatalf("want the Goexit reported at every reconcile (%d Panic events) and the workload's ConfigMap created after them (%v):\n%s", len(panics), created, res.History.Lines())
		}
		if !strings.HasPrefix(panics[0].Err, "runtime.Goexit in Reconcile") || !strings.Contains(panics[0].Detail, "(*quitter).Reconcile") {
			t.Fatalf("the Panic event should name runtime.Goexit and the reconciler's frame: err %q, detail:\n%s", panics[0].Err, panics[0].Detail)
		}
		if strings.Contains(panics[0].Detail, "iter.") || strings.Contains(panics[0].Detail, "opcheck/simulator.") {
			t.Fatalf("the Panic event's stack shows harness frames:\n%s", panics[0].Detail)
		}
	})
}

// A reconciler that recovers every panic cannot go on calling the API
// once opcheck unwinds it: over its call budget it makes no further call
// (the budget is 10 calls; it tries 100), and a crash that strikes it
// gives the history the same reconciler without the recover gives, byte
// for byte.
func TestRecoveringReconcilerIsUnwound(t *testing.T) {
	t.Run("over budget", func(t *testing.T) {
		sc := misbehavingScenario("stubborn", func(c client.Client) reconcile.Reconciler { return &stubborn{c: c} }, 10)
		sc.MaxSteps = 40
		res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
		gets, budget := 0, 0
		for _, e := range res.History.Events {
			switch {
			case e.Actor == "controller/stubborn" && e.Op == model.OpGet:
				gets++
			case e.Actor == "controller/stubborn" && e.Op == model.OpStepBudget:
				budget++
				if gets != 10 {
					t.Fatalf("the reconcile made %d Gets before its StepBudget event, want its budget of 10:\n%s", gets, res.History.Lines())
				}
				gets = 0
			}
		}
		if budget == 0 {
			t.Fatalf("no StepBudget event:\n%s", res.History.Lines())
		}
	})
	t.Run("crash", func(t *testing.T) {
		reconcilers := []struct {
			name string
			new  func(c client.Client) reconcile.Reconciler
		}{
			{"plain", func(c client.Client) reconcile.Reconciler { return &twoWrites{c: c} }},
			{"recover in Reconcile", func(c client.Client) reconcile.Reconciler { return recovering{&twoWrites{c: c}} }},
			{"recover at every call", func(c client.Client) reconcile.Reconciler {
				return &writesRecovering{c: c, names: []string{"a", "b", "c"}}
			}},
		}
		histories := map[string]string{}
		for _, r := range reconcilers {
			sc := &simulator.Scenario{
				Name:    "crash",
				Scheme:  webScheme,
				Objects: []client.Object{&WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}, Spec: WebAppSpec{Replicas: 1}}},
				Controllers: []simulator.ControllerSpec{{
					Name: "two", For: &WebApp{}, New: r.new,
				}},
				Faults: model.FaultBudget{Crashes: 1},
			}
			res, _ := runScripted(t, sc, []simulator.ScriptStep{
				{After: "Create ConfigMap default/a", Label: "crash controller/two, restart on apiserver-1"},
			}, simulator.RunOptions{})
			h := res.History.Lines()
			histories[r.name] = h
			// The crash strikes the reconcile parked at its second
			// Create: no call of it may run after that, so the crash
			// comes right after the first.
			crashed := false
			lines := strings.Split(h, "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "fault Crash") {
					crashed = true
					if i == 0 || !strings.HasPrefix(lines[i-1], "controller/two Create ConfigMap default/a ") {
						t.Fatalf("%s: the crashed reconcile made a call after the one the crash followed:\n%s", r.name, h)
					}
				}
			}
			if !crashed {
				t.Fatalf("%s: the script's crash did not happen:\n%s", r.name, h)
			}
		}
		if histories["plain"] != histories["recover in Reconcile"] {
			t.Fatalf("a recover in Reconcile changed what a crash does; without it:\n%s\nwith it:\n%s", histories["plain"], histories["recover in Reconcile"])
		}
	})
}

// writesRecovering creates a ConfigMap per name, recovering any panic of
// each Create and going on to the next.
type writesRecovering struct {
	c     client.Client
	names []string
}

func (r *writesRecovering) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	for _, name := range r.names {
		func() {
			defer func() { _ = recover() }()
			_ = r.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: name}})
		}()
	}
	return reconcile.Result{}, nil
}
