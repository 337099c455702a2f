package casskop

import (
	"testing"

	"github.com/leanovate/gopter/gen"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// FuzzCasskop fuzzes the buggy variant: `go test -fuzz=FuzzCasskop
// ./targets/casskop` finds the seed bug (the decommission stuck after a
// crash) and saves the input under testdata/fuzz; plain `go test` runs the
// seed corpus, whose schedules do not violate.
func FuzzCasskop(f *testing.F) { explore.Fuzz(f, Scenario(Buggy)) }

// workloadActions are the user writes of generated workloads: create cc
// (1..3 nodes), set nodesPerRacks to 1..3.
func workloadActions() []explore.Action {
	return []explore.Action{
		{Name: "create", Gen: gen.IntRange(1, 3), Step: func(p any) simulator.WorkloadStep { return CreateStep(int32(p.(int))) }},
		{Name: "nodesPerRacks", Gen: gen.IntRange(1, 3), Step: func(p any) simulator.WorkloadStep { return ScaleStep(int32(p.(int))) }},
	}
}

// FINDING (open): the fixed variant does not survive generated workloads.
// The first finding, [create(1) nodesPerRacks(2) nodesPerRacks(1)] (a
// scale-down during the scale-up's 20 s delay removed the node without a
// decommission, leaving its PVC), is fixed in Fixed. The next one, with
// gopter seed 1 and 10 workloads of 10 schedules, shrinks to [create(1)
// nodesPerRacks(3) nodesPerRacks(1)]: a scale-down by two nodes ends
// quiescent with 1 ready pod but 2 live PVCs and last action
// ScaleDown/Done (EventuallyConverges). This test pins it; once
// casskop/fixed is corrected, turn it into an explore.CheckWorkloads that
// must pass.
func TestWorkloadsFixedFinding(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and explores workloads")
	}
	rep := explore.ExploreWorkloads(Scenario(Fixed), workloadActions(), explore.WithWorkloadTests(10), explore.WithWorkloadSchedules(10))
	if rep.Verdict != explore.VerdictViolation {
		t.Fatalf("verdict %s (err %v) after %d workloads: the finding is gone; make this test a CheckWorkloads that must pass", rep.Verdict, rep.Err, rep.Passed)
	}
	t.Logf("%s", explore.WorkloadRecipe(rep))
	if len(rep.Workload) > 3 {
		t.Errorf("shrunk to %d steps, want at most 3", len(rep.Workload))
	}
}

// The first generated-workload finding, fixed in Fixed: a scale-down asked
// during the scale-up's delay goes through a decommission.
func TestWorkloadScaleDownDuringScaleUpFixed(t *testing.T) {
	calls := []explore.Call{{Action: "create", Param: 1}, {Action: "nodesPerRacks", Param: 2}, {Action: "nodesPerRacks", Param: 1}}
	for _, v := range []Variant{Buggy, Fixed} {
		sc, err := explore.WorkloadScenario(Scenario(v), workloadActions(), calls)
		if err != nil {
			t.Fatal(err)
		}
		opts := explore.DefaultOptions()
		opts.Strategy, opts.Schedules = explore.StrategyRandom, 60
		opts.Faults = &model.FaultBudget{} // no faults: the race is the user's
		rep := explore.Explore(sc, opts)
		switch {
		case v == Fixed && rep.Verdict != explore.VerdictInconclusive:
			t.Fatalf("fixed: %s %v", rep.Verdict, rep.Violation)
		case v == Buggy && rep.Verdict != explore.VerdictViolation:
			t.Fatalf("buggy: want the PVC left behind to be found, got %s after %d schedules", rep.Verdict, rep.Schedules)
		}
	}
}

// TestExhaustiveCrashAndStaleFixed is the regression check of the stale
// change of mind (docs/bugs.md): with one crash and one paused cache the
// exhaustive search verifies casskop/fixed (before the fix it reported
// EventuallyConverges after 40 schedules).
func TestExhaustiveCrashAndStaleFixed(t *testing.T) {
	rep := explore.Explore(Scenario(Fixed), explore.Options{Faults: &model.FaultBudget{Crashes: 1, Stale: 1}})
	if rep.Verdict != explore.VerdictVerified {
		t.Fatalf("verdict %s after %d schedules, want verified: %v", rep.Verdict, rep.Schedules, rep.Violation)
	}
	t.Logf("verified after %d schedules", rep.Schedules)
}
