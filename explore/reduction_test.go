package explore

import (
	"maps"
	"slices"
	"testing"

	"github.com/opcheck/opcheck/model"
)

// The reduced search (reduction.go: a fault is not offered again after
// steps independent of it) meets exactly the violations the full search
// (every enabled fault at every decision) meets: the same properties, each
// in the same final states of the store. The reduced search's schedules
// are among the full search's, so it can only miss some; a step wrongly
// declared independent of a fault shows here as a violation, or a final
// state of one, that only the full search reaches. The budgets keep the
// full search to seconds; kuberay/scale checks the eviction case (a bound,
// not a proof), the others the crash and stale-cache cases.
func TestReductionKeepsEveryViolation(t *testing.T) {
	cases := []struct {
		name      string
		faults    model.FaultBudget
		violation bool
		long      bool
	}{
		{"casskop/buggy", model.FaultBudget{Crashes: 1}, true, false},
		{"casskop/fixed", model.FaultBudget{Crashes: 1}, false, false},
		{"kuberay/scale", model.FaultBudget{Evictions: 1}, true, false},
		{"zookeeper/buggy", model.FaultBudget{Stale: 1}, true, false},
		// Two faults, with a violation.
		{"casskop/upstream-fix", model.FaultBudget{Crashes: 1, Stale: 1}, true, true},
		{"zookeeper/fixed", model.FaultBudget{Stale: 1}, false, true},
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		reducedSet, reduced := violationSet(t, lookup(t, c.name), Options{Faults: &c.faults})
		fullSet, full := violationSet(t, lookup(t, c.name), Options{Faults: &c.faults, NoReduce: true})
		if !maps.Equal(reducedSet, fullSet) {
			t.Errorf("%s with %s: the reduced search met %d violations %v, the full search %d %v", c.name, &c.faults, len(reducedSet), slices.Sorted(maps.Keys(reducedSet)), len(fullSet), slices.Sorted(maps.Keys(fullSet)))
		}
		if (len(fullSet) > 0) != c.violation {
			t.Errorf("%s with %s: violations %v, want some: %v (the case does not test what it is for)", c.name, &c.faults, slices.Sorted(maps.Keys(fullSet)), c.violation)
		}
		if full.Steps <= reduced.Steps {
			t.Errorf("%s with %s: the full search took %d steps, the reduced one %d: the reduction cut nothing here", c.name, &c.faults, full.Steps, reduced.Steps)
		}
		t.Logf("%s with %s: %d violating final states; reduced %d schedules (%d steps), full %d (%d steps)", c.name, &c.faults, len(fullSet), reduced.Schedules, reduced.Steps, full.Schedules, full.Steps)
	}
}
