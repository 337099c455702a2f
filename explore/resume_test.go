package explore

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
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

// forgetfulCounter is a property monitor with a broken Fork: it counts the
// events it is shown and reports a violation when its count is not the
// event's step (atFinish: when it is not the history's length, at Finish),
// which never happens to a monitor shown the history from its start; its
// forks forget the count, as a Fork that misses state would.
type forgetfulCounter struct {
	n        int
	atFinish bool
}

func (m *forgetfulCounter) Observe(_ *properties.State, e *model.Event) *properties.Violation {
	m.n++
	if !m.atFinish && m.n != e.Step {
		return &properties.Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("counted %d events at step %d", m.n, e.Step)}
	}
	return nil
}

func (m *forgetfulCounter) Finish(_ *properties.State, h *model.History) *properties.Violation {
	if n := len(h.Events); m.atFinish && n > 0 && m.n != n {
		return &properties.Violation{Step: h.Events[n-1].Step, Event: h.Events[n-1], Explanation: fmt.Sprintf("counted %d of %d events", m.n, n)}
	}
	return nil
}

func (m *forgetfulCounter) Fork() properties.Monitor { return &forgetfulCounter{atFinish: m.atFinish} }

// TestViolationOnlyAResumedWorldHasIsAnError: a property monitor whose
// Fork loses state makes the search find, in a schedule resumed from a
// checkpoint, a violation that the schedule run from the start does not
// have: at an event (the resumed run stops there, its history shorter),
// or at Finish (the same history, a different verdict). The search must
// not report it as the operator's: the verdict is an error that names the
// copy and the way out (-no-resume), with which the same search verifies.
func TestViolationOnlyAResumedWorldHasIsAnError(t *testing.T) {
	base := lookup(t, "zookeeper/fixed")
	for _, atFinish := range []bool{false, true} {
		sc := *base
		sc.Properties = append(slices.Clone(base.Properties), properties.Property{
			Name: "CountsEvents", Statement: "the monitor has counted every event", Kind: properties.Safety,
			NewMonitor: func() properties.Monitor { return &forgetfulCounter{atFinish: atFinish} },
		})
		for _, noResume := range []bool{false, true} {
			opts := DefaultOptions()
			opts.Workers = 1
			opts.Faults = &model.FaultBudget{Crashes: 1}
			opts.NoResume = noResume
			r := Explore(&sc, opts)
			switch {
			case noResume && r.Verdict != VerdictVerified:
				t.Fatalf("atFinish %v, -no-resume: %s (%v), want verified: no run from the start breaks CountsEvents", atFinish, r.Verdict, r.Err)
			case !noResume && (r.Verdict != VerdictError || r.Err == nil || !strings.Contains(r.Err.Error(), "CountsEvents violated") || !strings.Contains(r.Err.Error(), "properties.Forker") || !strings.Contains(r.Err.Error(), "-no-resume")):
				t.Fatalf("atFinish %v, resuming from checkpoints: %s (%v), want an error naming CountsEvents, the monitor's Fork and -no-resume", atFinish, r.Verdict, r.Err)
			case !noResume && r.Resumed == 0:
				t.Fatalf("atFinish %v: no schedule resumed from a checkpoint: %+v", atFinish, r)
			}
			if !noResume {
				t.Log(r.Err)
			}
		}
	}
}
