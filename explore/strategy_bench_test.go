package explore

import (
	"slices"
	"testing"
)

// BenchmarkSchedulesToFirstViolation measures how many schedules random and
// PCT need to find each seed bug, and how long that takes. Iteration i
// explores from base seed (i+1)<<32, so the iterations' schedule ranges do not
// overlap; run it with a fixed count of iterations to get a median over that
// many seeds:
//
//	go test -run '^$' -bench SchedulesToFirstViolation -benchtime 20x ./explore/
//
// ns/op is the time to the first violation (or to the end of the budget);
// schedules/op-median is the median number of schedules; not-found/op is the
// fraction of seeds whose whole budget found nothing.
func BenchmarkSchedulesToFirstViolation(b *testing.B) {
	for _, name := range []string{"zookeeper/buggy", "casskop/buggy", "kuberay/scale", "kuberay/lifecycle"} {
		for _, strategy := range []string{StrategyRandom, StrategyPCT} {
			b.Run(name+"/"+strategy, func(b *testing.B) {
				sc := lookup(b, name)
				counts := make([]int, 0, b.N)
				steps := make([]int, 0, b.N)
				notFound := 0
				for i := 0; i < b.N; i++ {
					opts := DefaultOptions()
					opts.Strategy, opts.Seed = strategy, uint64(i+1)<<32
					rep := Explore(sc, opts)
					if rep.Err != nil {
						b.Fatal(rep.Err)
					}
					if rep.Violation == nil {
						notFound++
					}
					counts = append(counts, rep.Schedules)
					steps = append(steps, rep.Steps)
				}
				b.ReportMetric(median(counts), "schedules/op-median")
				b.ReportMetric(median(steps), "steps/op-median")
				b.ReportMetric(float64(notFound)/float64(b.N), "not-found/op")
			})
		}
	}
}

// median sorts xs and returns their median.
func median(xs []int) float64 {
	slices.Sort(xs)
	return float64(xs[(len(xs)-1)/2]+xs[len(xs)/2]) / 2
}

// BenchmarkStepsPerViolation measures how much work random and PCT spend
// per violating schedule: iteration i runs 1,000 schedules from base seed
// (i+1)<<40 without stopping at a violation, and the figures are over all
// iterations. Steps per violation is the expected work to the first
// violation, a figure the machine's load does not move; run it with
//
//	go test -run '^$' -bench StepsPerViolation -benchtime 8x ./explore/
func BenchmarkStepsPerViolation(b *testing.B) {
	const schedules = 1000
	for _, name := range []string{"zookeeper/buggy", "zookeeper/upstream-fix", "casskop/buggy", "kuberay/scale", "kuberay/lifecycle"} {
		for _, strategy := range []string{StrategyRandom, StrategyPCT} {
			b.Run(name+"/"+strategy, func(b *testing.B) {
				sc := lookup(b, name)
				steps, violating := 0, 0
				for i := 0; i < b.N; i++ {
					rep := Explore(sc, Options{Strategy: strategy, Seed: uint64(i+1) << 40, Schedules: schedules})
					if rep.Err != nil {
						b.Fatal(rep.Err)
					}
					steps += rep.Steps
					violating += rep.Violating
				}
				b.ReportMetric(float64(steps)/float64(b.N*schedules), "steps/schedule")
				b.ReportMetric(float64(violating), "violating")
				if violating > 0 {
					b.ReportMetric(float64(steps)/float64(violating), "steps/violation")
				}
			})
		}
	}
}
