package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// reusedStepsChooser checks, at every step decision, the steps the
// scheduler keeps between decisions against what building them afresh
// gives: each built-in actor's steps (kept while the store's revision and
// the clock stand) are what it offers when asked now; the clock step's label names the world's next timer, and the
// step it chose last ticked the clock to exactly that time (its Run reads
// the target the scheduler kept); a "continue" step names the request
// its host is reconciling.
type reusedStepsChooser struct {
	r      *rand.Rand
	w      *simulator.World
	tickTo model.Time // the target of the clock step chosen last
	ticked bool       // whether the last choice was the clock step
	ticks  int        // clock steps checked after they ran
	conts  map[string]bool
	// actorSteps counts the built-in actors' non-empty answers checked.
	actorSteps int
	err        error
	checked    int
}

func (c *reusedStepsChooser) Choose(d model.Decision) int {
	i := c.r.IntN(len(d.Options))
	if d.Kind != model.ChooseStep || c.err != nil {
		return i
	}
	c.err = c.check(d, i)
	return i
}

func (c *reusedStepsChooser) check(d model.Decision, chosen int) error {
	c.checked++
	if c.ticked {
		c.ticked = false
		if now := c.w.Clock.Now(); now != c.tickTo {
			return fmt.Errorf("after the clock step to %s the clock is at %s", c.tickTo, now)
		}
		c.ticks++
	}
	// The built-in actors' steps the collect offered, reused or not, are
	// what each actor offers when asked now.
	actors, kept := c.w.BuiltinStepsForTest()
	if len(actors) == 0 {
		return fmt.Errorf("no built-in actor's steps were kept")
	}
	for i, a := range actors {
		fresh := a.Steps(c.w, nil)
		if len(fresh) > 0 {
			c.actorSteps++
		}
		if err := sameSteps(kept[i], fresh); err != nil {
			return fmt.Errorf("%T at t=%s, store revision %d: the collect offered what differs from what it offers now: %v", a, c.w.Clock.Now(), c.w.Store.Revision(), err)
		}
	}
	for i, o := range d.Options {
		switch {
		case o.Class == model.StepClock:
			at, ok := c.w.NextTimerForTest()
			if !ok {
				return fmt.Errorf("a clock step %q is offered with no timer pending", o.Label)
			}
			if want := "tick to " + at.String(); o.Label != want {
				return fmt.Errorf("the clock step is labelled %q, want %q", o.Label, want)
			}
			if i == chosen {
				c.ticked, c.tickTo = true, at
			}
		case o.Class == model.StepReconcile && strings.HasPrefix(o.Label, "continue "):
			var req string
			for _, h := range c.w.Hosts() {
				if h.Actor() == o.Actor {
					r, ok := h.ReconcilingForTest()
					if !ok {
						return fmt.Errorf("%q is offered for %s, which reconciles nothing", o.Label, o.Actor)
					}
					req = r.String()
				}
			}
			if want := "continue " + req; o.Label != want {
				return fmt.Errorf("%s's reconcile step is labelled %q, want %q", o.Actor, o.Label, want)
			}
			c.conts[o.Label] = true
		}
	}
	return nil
}

// sameSteps reports the first difference between two lists of steps,
// their Run functions compared by identity (the same closure).
func sameSteps(got, want []simulator.Step) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d steps %s, want %d %s", len(got), stepLabels(got), len(want), stepLabels(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Actor != w.Actor || g.Class != w.Class || g.Label != w.Label || g.Fault != w.Fault || g.Kind != w.Kind || g.Server != w.Server {
			return fmt.Errorf("step %d is %+v, want %+v", i, g, w)
		}
		if funcIdentity(g.Run) != funcIdentity(w.Run) {
			return fmt.Errorf("step %d (%s) runs another closure", i, g.Label)
		}
	}
	return nil
}

func stepLabels(steps []simulator.Step) string {
	var ls []string
	for _, s := range steps {
		ls = append(ls, s.Label)
	}
	return fmt.Sprintf("%q", ls)
}

// funcIdentity is the closure a func value points to.
func funcIdentity(f func()) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&f)) }

// twoWebScenario is webScenario with two web objects, so one controller
// reconciles two requests in turn.
func twoWebScenario() *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "two-webs",
		Scheme:      webScheme,
		Controllers: []simulator.ControllerSpec{webController()},
		Workload: []simulator.WorkloadStep{
			{Name: "create web a", Do: createWeb("a", 2), Until: webReady("a", 2)},
			{Name: "create web b", Do: createWeb("b", 1), Until: webReady("b", 1)},
			{Name: "scale web a to 3", Do: scaleWeb("a", 3), Until: webReady("a", 3)},
		},
		Properties: []properties.Property{properties.NoReconcilePanic()},
	}
}

// TestSchedulerReusedStepsMatchFreshOnes runs random schedules with every
// fault through the checks of reusedStepsChooser.
func TestSchedulerReusedStepsMatchFreshOnes(t *testing.T) {
	scenarios := []func() *simulator.Scenario{
		twoWebScenario,
		func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Fixed) },
		func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) },
	}
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	faults := model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1, Drops: 1}
	ticks, actorSteps, conts := 0, 0, map[string]bool{}
	for _, newScenario := range scenarios {
		for seed := range seeds {
			sc := newScenario()
			c := &reusedStepsChooser{r: rand.New(rand.NewPCG(seed, 0x7469636b)), conts: conts}
			w, err := simulator.NewWorld(sc, c, simulator.RunOptions{Faults: &faults, KeepGoing: true})
			if err != nil {
				t.Fatal(err)
			}
			c.w = w
			if _, err := w.Run(); err != nil {
				t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
			}
			if c.err != nil {
				t.Fatalf("%s seed %d, decision %d: %v", sc.Name, seed, c.checked, c.err)
			}
			ticks += c.ticks
			actorSteps += c.actorSteps
		}
	}
	// The checks ran: clock steps were taken, and some controller was
	// offered to continue reconciles of two different requests.
	if actorSteps < 100 {
		t.Fatalf("only %d non-empty answers of built-in actors checked", actorSteps)
	}
	if ticks < 10 {
		t.Fatalf("only %d clock steps checked after they ran", ticks)
	}
	if !conts["continue default/a"] || !conts["continue default/b"] {
		t.Fatalf("the two webs' reconciles were not both offered: %v", conts)
	}
	t.Logf("%d clock steps checked; %d non-empty answers of built-in actors; continue labels seen: %d", ticks, actorSteps, len(conts))
}
