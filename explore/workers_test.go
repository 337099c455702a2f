package explore

import (
	"bytes"
	"hash"
	"testing"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// workerIndependent is what must not depend on the number of workers: the
// verdict, the violation, its choices and history, and the trace file
// written.
func workerIndependent(t *testing.T, rep Report) string {
	t.Helper()
	if rep.Err != nil {
		t.Fatalf("%s: %v", rep.Scenario, rep.Err)
	}
	if rep.Violation == nil {
		return rep.Verdict
	}
	var b bytes.Buffer
	tr := traces.FromRun(rep.Scenario, rep.Faults, rep.Choices, rep.History, rep.Violation)
	if err := traces.Write(&b, tr); err != nil {
		t.Fatal(err)
	}
	return rep.Verdict + " " + rep.Violation.String() + "\n" + model.FormatChoices(rep.Choices) + "\n" + b.String()
}

// noCrash is violated at Settle by every schedule with a crash: in
// idleScenario almost every schedule violates, so workers finish many
// violating schedules at once.
func noCrash() properties.Property {
	return properties.Property{Name: "NoCrash", NewMonitor: func() properties.Monitor {
		crashed := false
		return properties.Fingerprinted(properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
			switch e.Op {
			case model.OpCrash:
				crashed = true
			case model.OpSettle:
				if crashed {
					return &properties.Violation{Step: e.Step, Event: *e, Explanation: "a crash struck"}
				}
			}
			return nil
		}), func(h hash.Hash64) { h.Write([]byte{byte(boolInt(crashed))}) })
	}}
}

// Delays that make four workers finish out of order: a result that
// depended on who finished first (or last) would show. Among the
// exhaustive search's items with as many faults, a longer prefix comes
// earlier in the depth-first order.
var perturbations = map[string]func(key []int){
	"earlier items slower": func(key []int) { time.Sleep(time.Duration(len(key)) * time.Millisecond) },
	"later items slower":   func(key []int) { time.Sleep(time.Duration(max(0, 6-len(key))) * time.Millisecond) },
	"uneven": func(key []int) {
		h := uint64(len(key))
		for _, k := range key {
			h = mix(h ^ uint64(k))
		}
		time.Sleep(time.Duration(h%4) * time.Millisecond)
	},
}

// One worker and four find the same thing: the exhaustive search reports
// the smallest violating schedule in depth-first order, the sampling
// strategies the lowest violating index, whichever worker ran it.
func TestWorkersDoNotChangeTheOutcome(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		want    string
		perturb []string
	}{
		{"zookeeper/buggy", Options{Strategy: StrategyExhaustive}, VerdictViolation, []string{"uneven"}},
		{"casskop/buggy", Options{Strategy: StrategyExhaustive, Faults: &model.FaultBudget{Crashes: 1, Stale: 1}}, VerdictViolation, []string{"uneven"}},
		{"casskop/fixed", Options{Strategy: StrategyExhaustive, Faults: &model.FaultBudget{Crashes: 2}}, VerdictVerified, []string{"uneven"}},
		{"idle", Options{Strategy: StrategyExhaustive, Faults: &model.FaultBudget{Crashes: 2}}, VerdictViolation, []string{"earlier items slower", "later items slower"}},
		// Merges across depths that the step bound undoes (the level is
		// explored again): see TestPruningAcrossDepths.
		{"depth", Options{Strategy: StrategyExhaustive}, VerdictViolation, []string{"uneven", "earlier items slower"}},
		{"zookeeper/buggy", Options{Strategy: StrategyRandom, Schedules: 1000, StopAtFirst: true}, VerdictViolation, []string{"uneven"}},
		{"casskop/buggy", Options{Strategy: StrategyPCT, Schedules: 400, StopAtFirst: true}, VerdictViolation, []string{"uneven"}},
		{"casskop/fixed", Options{Strategy: StrategyRandom, Schedules: 60}, VerdictInconclusive, []string{"uneven"}},
	}
	for _, c := range cases {
		sc := func() *simulator.Scenario {
			switch c.name {
			case "idle":
				return idleScenario(noCrash())
			case "depth":
				return depthScenario(35)
			}
			return lookup(t, c.name)
		}
		one := c.opts
		one.Workers = 1
		r1 := Explore(sc(), one)
		a := workerIndependent(t, r1)
		if r1.Verdict != c.want {
			t.Errorf("%s %s: verdict %s, want %s", c.name, c.opts.Strategy, r1.Verdict, c.want)
		}
		for _, p := range c.perturb {
			four := c.opts
			four.Workers, four.perturb = 4, perturbations[p]
			r4 := Explore(sc(), four)
			if b := workerIndependent(t, r4); a != b {
				t.Errorf("%s %s (%s): one worker and four differ:\n--- 1 worker (%d schedules)\n%s\n--- 4 workers (%d schedules)\n%s", c.name, c.opts.Strategy, p, r1.Schedules, a, r4.Schedules, b)
			}
			if c.opts.Strategy != StrategyExhaustive && (r1.Schedules != r4.Schedules || r1.Index != r4.Index || r1.Steps != r4.Steps) {
				t.Errorf("%s %s: sampling accounts differ: 1 worker %d schedules (index %d, %d steps), 4 workers %d (index %d, %d steps)", c.name, c.opts.Strategy, r1.Schedules, r1.Index, r1.Steps, r4.Schedules, r4.Index, r4.Steps)
			}
			t.Logf("%s %s: %s; 1 worker %d schedules in %s, 4 workers (%s) %d in %s", c.name, c.opts.Strategy, r1.Verdict, r1.Schedules, r1.Elapsed, p, r4.Schedules, r4.Elapsed)
		}
	}
}
