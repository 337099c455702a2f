package explore

import (
	"os"
	"slices"
	"sync"
	"testing"
)

// TestMeasureSchedulesToFirstViolation records how many schedules each
// strategy needs to find the seed bugs, over 20 base seeds (k<<32, so the
// seeds' schedule ranges do not overlap). It is a measurement, not a check:
// run it with OPCHECK_MEASURE=1 go test -run Measure -v ./explore/.
func TestMeasureSchedulesToFirstViolation(t *testing.T) {
	if os.Getenv("OPCHECK_MEASURE") == "" {
		t.Skip("set OPCHECK_MEASURE=1 to measure (minutes)")
	}
	for _, name := range []string{"zookeeper/buggy", "casskop/buggy"} {
		for _, strategy := range []string{StrategyRandom, StrategyPCT} {
			counts := make([]int, 20)
			var wg sync.WaitGroup
			sem := make(chan bool, 8)
			for k := range counts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- true
					defer func() { <-sem }()
					opts := DefaultOptions()
					opts.Strategy, opts.Seed = strategy, uint64(k+1)<<32
					rep := Explore(lookup(t, name), opts)
					if rep.Err != nil {
						t.Error(rep.Err)
					}
					counts[k] = rep.Schedules
					if rep.Violation == nil {
						counts[k] = -1 // not found within the budget
					}
				}()
			}
			wg.Wait()
			sorted := slices.Clone(counts)
			slices.Sort(sorted)
			t.Logf("%s %s: seeds 1..5 %v; all 20 %v; median %d (-1: not found in %d)", name, strategy, counts[:5], counts, (sorted[9]+sorted[10])/2, DefaultSchedules)
		}
	}
}
