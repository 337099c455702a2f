package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
)

// TestResumeExploresTheSameSchedules checks that resuming schedules from
// checkpoints (simulator.World.Checkpoint) changes nothing but the steps
// re-run: on one worker, the search with checkpoints and the search that
// replays every schedule from the start (Options.NoResume) run the same
// schedules, reach and prune the same states, take the same steps in all,
// and report the same verdict, violation, choices and trace. The bounds
// include every fault kind the scenarios take, so that checkpoints hold
// restarted controllers, paused caches and evicted pods. It also checks
// that resuming saved most of the replay, so that a search that never
// resumed could not pass.
func TestResumeExploresTheSameSchedules(t *testing.T) {
	cases := []struct {
		name   string
		budget model.FaultBudget
	}{
		{"zookeeper/buggy", model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1}},
		{"zookeeper/fixed", model.FaultBudget{Crashes: 1, Stale: 1}},
		{"zookeeper/upstream-fix", model.FaultBudget{Crashes: 1, Drops: 1}},
		{"casskop/buggy", model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1}},
		{"casskop/fixed", model.FaultBudget{Crashes: 1, Stale: 1, Expiries: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := lookup(t, tc.name)
			run := func(noResume bool) Report {
				opts := DefaultOptions()
				opts.Workers = 1
				budget := tc.budget
				opts.Faults = &budget
				opts.NoResume = noResume
				return Explore(sc, opts)
			}
			replayed, resumed := run(true), run(false)
			if a, b := workerIndependent(t, replayed), workerIndependent(t, resumed); a != b {
				t.Fatalf("replayed from the start:\n%s\nresumed from checkpoints:\n%s", a, b)
			}
			type counts struct{ schedules, states, pruned, steps, reexplored int }
			a := counts{replayed.Schedules, replayed.States, replayed.Pruned, replayed.Steps, replayed.Reexplored}
			b := counts{resumed.Schedules, resumed.States, resumed.Pruned, resumed.Steps, resumed.Reexplored}
			if a != b {
				t.Fatalf("replayed from the start: %+v; resumed from checkpoints: %+v", a, b)
			}
			if replayed.Complete != resumed.Complete {
				t.Fatalf("complete: %v replayed, %v resumed", replayed.Complete, resumed.Complete)
			}
			if replayed.Resumed != 0 || resumed.Replayed+resumed.Resumed != replayed.Replayed {
				t.Fatalf("replayed %d steps from the start; with checkpoints %d replayed and %d resumed", replayed.Replayed, resumed.Replayed, resumed.Resumed)
			}
			if resumed.Resumed < replayed.Replayed/2 {
				t.Fatalf("checkpoints spared %d of the %d steps replayed from the start: fewer than half", resumed.Resumed, replayed.Replayed)
			}
			t.Logf("%s, %d schedules, %d steps: %d replayed from the start; %d replayed and %d resumed with checkpoints", resumed.Verdict, resumed.Schedules, resumed.Steps, replayed.Replayed, resumed.Replayed, resumed.Resumed)
		})
	}
}
