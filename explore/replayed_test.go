package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// Report.Replayed counts the steps each schedule re-ran from the start
// because an earlier schedule had run them: with one worker, a schedule's
// first decisions repeat its parent's up to the decision where it takes
// its last fault, and every decision before the settle phase is one step.
// So Replayed is the sum, over the schedules, of the longest run of
// leading choices a schedule shares with any earlier one. Mutations tried:
// counting the steps up to the prefix's first fault, or through the fault
// step itself, each fails it.
func TestReplayedCountsTheRepeatedPrefixes(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults model.FaultBudget
	}{
		{"casskop/fixed", model.FaultBudget{Crashes: 2}},
		{"zookeeper/buggy", model.FaultBudget{Crashes: 1, Stale: 1}},
	} {
		var earlier [][]model.Choice
		shared := 0
		rep := Explore(lookup(t, c.name), Options{Faults: &c.faults, Workers: 1, Visit: func(_ int, _ uint64, res *simulator.Result) {
			most := 0
			for _, e := range earlier {
				n := 0
				for n < len(e) && n < len(res.Choices) && e[n] == res.Choices[n] {
					n++
				}
				most = max(most, n)
			}
			shared += most
			earlier = append(earlier, res.Choices)
		}})
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		if rep.Replayed != shared || rep.Replayed == 0 {
			t.Errorf("%s with %s: Replayed %d, want the %d leading steps the schedules shared with earlier ones (and some)", c.name, &c.faults, rep.Replayed, shared)
		}
		t.Logf("%s with %s: %d schedules, %d steps, %d replayed", c.name, &c.faults, rep.Schedules, rep.Steps, rep.Replayed)
	}
}
