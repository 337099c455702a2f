package simulator_test

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// classChecker is a chooser that, at every decision, checks that each
// enabled step's class agrees with its actor and fault, then picks
// pseudo-randomly (a fixed LCG: the test is deterministic).
type classChecker struct {
	t    *testing.T
	w    *simulator.World
	x    uint64
	seen map[model.StepClass]bool
}

func (c *classChecker) Choose(d model.Decision) int {
	n := len(d.Options)
	if c.w != nil && d.Kind == model.ChooseStep {
		for _, s := range c.w.Enabled() {
			c.seen[s.Class] = true
			if msg := classMismatch(s); msg != "" {
				c.t.Errorf("step %q of %s (class %s, fault %v): %s", s.Label, s.Actor, s.Class, s.Fault, msg)
			}
		}
	}
	c.x = c.x*6364136223846793005 + 1442695040888963407
	i := int(c.x>>33) % n
	// Faults are picked only one time in 32: a drop is offered whenever
	// an event is pending, and spending the budget at once would leave no
	// schedule that reaches the settle decision.
	if c.w != nil && d.Kind == model.ChooseStep && c.w.Enabled()[i].Fault != 0 && (c.x>>20)%32 != 0 {
		for j, s := range c.w.Enabled() {
			if s.Fault == 0 {
				return j
			}
		}
	}
	return i
}

func classMismatch(s simulator.Step) string {
	if (s.Class == model.StepFault) != (s.Fault != 0) {
		return "a fault step must have class fault, and only a fault step"
	}
	g := s.Actor.Group()
	switch s.Class {
	case model.StepReconcile, model.StepDeliver:
		if g != model.GroupController {
			return "reconcile and deliver steps belong to controllers under test"
		}
	case model.StepWorkload:
		if s.Actor != model.ActorUser {
			return "workload steps are the user's"
		}
	case model.StepFault, model.StepResume, model.StepSettle:
		if s.Actor != model.ActorFault {
			return "fault, resume and settle steps are the fault actor's"
		}
	case model.StepClock:
		if s.Actor != model.ActorClock {
			return "clock steps are the clock's"
		}
	case model.StepActor:
		if g != model.GroupBuiltIn && g != model.GroupExternal {
			return "actor steps are built-in or external actors'"
		}
	}
	return ""
}

// TestStepClassesMatchActors runs zookeeper/buggy schedules with every kind
// of fault enabled and checks every enabled step's class (the explorer's
// only way to tell steps apart) against who takes it, and that the runs
// offered every class at least once.
func TestStepClassesMatchActors(t *testing.T) {
	c := &classChecker{t: t, seen: map[model.StepClass]bool{}}
	for seed := uint64(1); seed <= 30 && !t.Failed(); seed++ {
		c.x = seed
		w, err := simulator.NewWorld(zookeeper.Scenario(zookeeper.Buggy), c, simulator.RunOptions{
			Faults: &model.FaultBudget{Crashes: 1, Stale: 1, Drops: 1, Evictions: 1, Expiries: 1}, KeepGoing: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		c.w = w
		if _, err := w.Run(); err != nil {
			t.Fatal(err)
		}
	}
	for cl := model.StepActor; cl <= model.StepClock; cl++ {
		if !c.seen[cl] {
			t.Errorf("no enabled step of class %s in 30 schedules: the check above saw too little", cl)
		}
	}
}
