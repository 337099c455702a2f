package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// Report.Replayed counts the steps each schedule re-ran because an
// earlier schedule had run them, and Report.Resumed those it skipped by
// resuming from a checkpoint: with one worker, a schedule's first
// decisions repeat its parent's up to the decision where it takes its last
// fault, and every decision before the settle phase is one step. So
// Replayed plus Resumed is the sum, over the schedules, of the longest run
// of leading choices a schedule shares with any earlier one; replaying
// every schedule from the start (NoResume), Replayed alone is. Mutations
// tried: counting the steps up to the prefix's first fault, or through the
// fault step itself, each fails it.
func TestReplayedCountsTheRepeatedPrefixes(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults model.FaultBudget
	}{
		{"casskop/fixed", model.FaultBudget{Crashes: 2}},
		{"zookeeper/buggy", model.FaultBudget{Crashes: 1, Stale: 1}},
	} {
		for _, noResume := range []bool{true, false} {
			var earlier [][]model.Choice
			shared := 0
			rep := Explore(lookup(t, c.name), Options{Faults: &c.faults, Workers: 1, NoResume: noResume, Visit: func(_ int, _ uint64, res *simulator.Result) {
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
			if rep.Replayed+rep.Resumed != shared || shared == 0 || noResume != (rep.Resumed == 0) {
				t.Errorf("%s with %s (no resume: %v): Replayed %d and Resumed %d, want the %d leading steps the schedules shared with earlier ones between them", c.name, &c.faults, noResume, rep.Replayed, rep.Resumed, shared)
			}
			t.Logf("%s with %s (no resume: %v): %d schedules, %d steps, %d replayed, %d resumed", c.name, &c.faults, noResume, rep.Schedules, rep.Steps, rep.Replayed, rep.Resumed)
		}
	}
}

// TestReconcilesCountsWhatTheSchedulesRan: Report.Reconciles is the
// reconciles the schedules started, as their histories show: every one
// for the sampling strategies and for a search that replays each schedule
// from the start; fewer for one that resumes schedules from checkpoints,
// which does not run again what it resumes past.
func TestReconcilesCountsWhatTheSchedulesRan(t *testing.T) {
	inHistories := func(opts Options, sc string) (Report, int) {
		n := 0
		opts.Visit = func(_ int, _ uint64, res *simulator.Result) {
			for _, e := range res.History.Events {
				if e.Op == model.OpReconcile {
					n++
				}
			}
		}
		rep := Explore(lookup(t, sc), opts)
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		return rep, n
	}
	// KubeRay's controller is built by a Setup and reconciles through
	// controller-runtime's machinery; zookeeper's is built by New.
	for _, sc := range []string{"zookeeper/fixed", "kuberay/scale"} {
		rep, n := inHistories(Options{Strategy: StrategyRandom, Schedules: 40, Workers: 2}, sc)
		if rep.Reconciles != n || n < 40 || rep.Result().Reconciles != n {
			t.Errorf("%s, random: Reconciles %d (JSON %d), the 40 histories start %d", sc, rep.Reconciles, rep.Result().Reconciles, n)
		}
	}
	faults := model.FaultBudget{Crashes: 2}
	replayed, n := inHistories(Options{Faults: &faults, Workers: 1, NoResume: true}, "casskop/fixed")
	if replayed.Reconciles != n || n == 0 {
		t.Errorf("exhaustive, every schedule from the start: Reconciles %d, the %d histories start %d", replayed.Reconciles, replayed.Schedules, n)
	}
	resumed, m := inHistories(Options{Faults: &faults, Workers: 1}, "casskop/fixed")
	if m != n || resumed.Resumed == 0 || resumed.Reconciles <= 0 || resumed.Reconciles >= n {
		t.Errorf("exhaustive, resuming from checkpoints (%d steps resumed): Reconciles %d, want fewer than the %d its histories start (%d replaying from the start)", resumed.Resumed, resumed.Reconciles, m, n)
	}
	t.Logf("casskop/fixed with %s: %d reconciles replaying from the start, %d resuming", &faults, replayed.Reconciles, resumed.Reconciles)
}
