package explore

import (
	"testing"
)

// BenchmarkExplore measures random exploration of zookeeper/buggy:
// schedules per second and steps per schedule. Violating schedules count
// like any other (StopAtFirst is off).
func BenchmarkExplore(b *testing.B) {
	sc := lookup(b, "zookeeper/buggy")
	schedules, steps := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 1, Seed: uint64(i)})
		if rep.Err != nil {
			b.Fatal(rep.Err)
		}
		schedules += rep.Schedules
		steps += rep.Steps
	}
	b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
	b.ReportMetric(float64(steps)/float64(schedules), "steps/schedule")
}
