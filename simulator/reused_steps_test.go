package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// reusedStepsChooser checks, at every step decision, the steps the
// scheduler keeps between decisions against what building them afresh
// gives: the clock step's label names the world's next timer, and the
// step it chose last ticked the clock to exactly that time (its Run reads
// the target the scheduler kept); a "continue" step names the request
// its host is reconciling.
type reusedStepsChooser struct {
	r       *rand.Rand
	w       *simulator.World
	tickTo  model.Time // the target of the clock step chosen last
	ticked  bool       // whether the last choice was the clock step
	ticks   int        // clock steps checked after they ran
	conts   map[string]bool
	err     error
	checked int
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
	ticks, conts := 0, map[string]bool{}
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
		}
	}
	// The checks ran: clock steps were taken, and some controller was
	// offered to continue reconciles of two different requests.
	if ticks < 10 {
		t.Fatalf("only %d clock steps checked after they ran", ticks)
	}
	if !conts["continue default/a"] || !conts["continue default/b"] {
		t.Fatalf("the two webs' reconciles were not both offered: %v", conts)
	}
	t.Logf("%d clock steps checked; continue labels seen: %d", ticks, len(conts))
}
