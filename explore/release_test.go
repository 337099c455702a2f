package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
)

// TestReleasedHistoriesSpareTheReport checks the recycling of history
// arrays (simulator.Result.Release): the explorer releases the result of
// every schedule it does not keep, and a later schedule reuses the array.
// The violation the report keeps must come out of that intact: its history
// is the one its recorded choices replay to, byte for byte, although many
// schedules, violating ones among them, ran after it on two workers.
func TestReleasedHistoriesSpareTheReport(t *testing.T) {
	for _, opts := range []Options{
		{Strategy: StrategyRandom, Seed: 1, Schedules: 40, Workers: 2},
		{Strategy: StrategyExhaustive, Faults: &model.FaultBudget{Crashes: 2}, Workers: 2, keepGoing: true},
	} {
		t.Run(opts.Strategy, func(t *testing.T) {
			sc := idleScenario(noCrash()) // almost every schedule with a crash violates
			rep := Explore(sc, opts)
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			if rep.Violation == nil || rep.History == nil {
				t.Fatalf("no violation kept in %d schedules (verdict %s): the test needs one", rep.Schedules, rep.Verdict)
			}
			if rep.Schedules < rep.Index+8 || (opts.Strategy == StrategyRandom && rep.Violating < 3) {
				t.Fatalf("%d violating of %d schedules, the first at index %d: the test needs schedules, violating ones among them, after the kept one", rep.Violating, rep.Schedules, rep.Index)
			}
			res, err := Replay(sc, rep.Choices, &rep.Faults)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := rep.History.Lines(), res.History.Lines(); got != want {
				t.Errorf("the report's history is not what its choices replay to: %s", firstDiffLine(got, want))
			}
		})
	}
}
