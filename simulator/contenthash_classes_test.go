package simulator_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// TestContentHashClassesAreJSONs runs random schedules of every shipped
// scenario and checks, over every object a write stored, that the content
// hash StateHash uses and the FNV hash of the JSON encoding (what it was
// before) are functions of each other, type by type: objects that encode
// alike hash alike (the explorer goes on merging the states it merged) and
// objects that encode differently hash differently (it merges no state it
// kept apart). The exhaustive schedule counts in the README's verdicts rest
// on it.
func TestContentHashClassesAreJSONs(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	classes := simulator.ContentClasses{}
	objects, distinct := 0, map[uint64]bool{}
	for _, sc := range targets.All() {
		for seed := range uint64(seeds) {
			res, err := simulator.Run(sc, newRandomChooser(seed+7), simulator.RunOptions{})
			if err != nil {
				t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
			}
			for i := range res.History.Events {
				e := &res.History.Events[i]
				if e.Object == nil {
					continue
				}
				obj, ok := e.Object.(client.Object)
				if !ok {
					continue
				}
				j, err := simulator.JSONContentHash(obj)
				if err != nil {
					t.Fatal(err)
				}
				if err := classes.Add(obj, simulator.ContentHash(obj), j); err != nil {
					t.Fatalf("%s seed %d, step %d: %v", sc.Name, seed, e.Step, err)
				}
				objects++
				distinct[j] = true
			}
		}
	}
	if objects < 500 || len(distinct) < 100 || len(distinct) == objects {
		t.Fatalf("%d stored objects, %d distinct encodings: too few to compare classes, or no two alike", objects, len(distinct))
	}
	t.Logf("%d stored objects of %d types, %d distinct encodings", objects, len(classes), len(distinct))
}
