package explore

import (
	"fmt"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// prunedAtSettleStart reports whether a run ended, pruned, at the first
// state of its settle phase (simulator.SettleMerger): its history ends
// with the end of the faults and the caches it resumed, nothing after.
func prunedAtSettleStart(res *simulator.Result) bool {
	if !res.World.Pruned() {
		return false
	}
	ev := res.History.Events
	i := len(ev) - 1
	for i >= 0 && ev[i].Op == model.OpResumeCache {
		i--
	}
	return i >= 0 && ev[i].Op == model.OpSettle
}

// The settle phase takes no choice, so the state it starts in decides the
// rest of the run. After the last fault of the budget the fault phase ends
// without a decision; the search claims the settle phase's first state
// like a decision's and prunes the runs that reach it again. Such merges
// happen (the comparison below would show nothing otherwise), and they
// keep every violation, the liveness ones judged at the settle phase's end
// included (casskop/buggy's EventuallyConverges). Mutation tried:
// SettleStarts answering true always (no merge at the settle phase's start)
// fails the count.
func TestSettleStartMergesKeepEveryViolation(t *testing.T) {
	cases := []struct {
		name   string
		faults *model.FaultBudget
	}{
		{"casskop/buggy", &model.FaultBudget{Crashes: 2}},
		{"casskop/upstream-fix", &model.FaultBudget{Crashes: 1, Stale: 1}},
		{"casskop/fixed", &model.FaultBudget{Crashes: 2}},
	}
	for _, c := range cases {
		sc := lookup(t, c.name)
		atSettle, liveness := 0, 0
		set := map[string]bool{}
		opts := Options{Strategy: StrategyExhaustive, Faults: c.faults, Workers: 1, keepGoing: true}
		opts.Visit = func(_ int, _ uint64, res *simulator.Result) {
			if prunedAtSettleStart(res) {
				atSettle++
			}
			for _, v := range res.Violations {
				set[fmt.Sprintf("%s @ store %016x", v.Property, res.World.StoreHash())] = true
				if v.Event.Op == model.OpQuiescent || v.Event.Op == model.OpSettle {
					liveness++
				}
			}
		}
		r := Explore(sc, opts)
		if r.Err != nil || !r.Complete {
			t.Fatalf("%s: search error %v, complete %v", c.name, r.Err, r.Complete)
		}
		without, _ := violationSet(t, sc, Options{Faults: c.faults, Workers: 1, NoPrune: true})
		if len(set) != len(without) {
			t.Errorf("%s with %s: %d violations with merging, %d without", c.name, c.faults, len(set), len(without))
		}
		for k := range without {
			if !set[k] {
				t.Errorf("%s with %s: merging lost %s", c.name, c.faults, k)
			}
		}
		if atSettle == 0 {
			t.Errorf("%s with %s: no run was merged at the start of its settle phase (%d schedules, %d pruned): the comparison shows nothing", c.name, c.faults, r.Schedules, r.Pruned)
		}
		t.Logf("%s with %s: %d schedules, %d pruned, %d of them at the settle phase's start; %d violations (%d at the settle phase's end)", c.name, c.faults, r.Schedules, r.Pruned, atSettle, len(set), liveness)
	}
}
