package explore

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkSampleWorkers measures random sampling on one worker and on
// one per processor: an op samples 3,000 schedules of the scenario, and
// schedules/s is the rate. The two rates side by side say how well
// sampling uses the cores; a CPU profile of the many-worker one shows the
// share of the goroutine that accounts for the schedules in index order
// (explore.sample, under Explore), which does not scale with the workers.
//
//	go test -run '^$' -bench BenchmarkSampleWorkers -benchtime 1x -count 3 ./explore/
func BenchmarkSampleWorkers(b *testing.B) {
	for _, name := range []string{"casskop/fixed", "zookeeper/fixed"} {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", strings.ReplaceAll(name, "/", "_"), workers), func(b *testing.B) {
				sc := lookup(b, name)
				schedules := 0
				for i := 0; i < b.N; i++ {
					rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 3000, Workers: workers})
					if rep.Err != nil || rep.Schedules != 3000 {
						b.Fatalf("%s: %d schedules (error %v), want 3000", name, rep.Schedules, rep.Err)
					}
					schedules += rep.Schedules
				}
				b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
			})
		}
	}
}
