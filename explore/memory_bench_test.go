package explore

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// BenchmarkExhaustiveMemory measures what a long exhaustive search keeps
// alive per schedule: its queue of items, its visited table and the
// records boundsHeld reads at the end all grow with the schedules run.
// Each op is one search of zookeeper/fixed with crashes=2 stale=2 (the
// issue-14 bounds), cut at 12,000 or 100,000 schedules; at schedule 2,000
// and at the last one the benchmark collects garbage and reads the live
// heap (the other worker waits for the search's lock meanwhile, so ns/op
// means nothing here). live-B/schedule is the growth between the two
// readings per schedule in between; live-MB the last reading.
//
//	go test -run '^$' -bench 'BenchmarkExhaustiveMemory/schedules=12000$' -benchtime 1x ./explore/
//	go test -run '^$' -bench 'BenchmarkExhaustiveMemory/schedules=100000$' -benchtime 1x ./explore/
func BenchmarkExhaustiveMemory(b *testing.B) {
	sc, err := targets.Lookup("zookeeper/fixed")
	if err != nil {
		b.Fatal(err)
	}
	for _, last := range []int{12000, 100000} {
		b.Run(fmt.Sprintf("schedules=%d", last), func(b *testing.B) { exhaustiveMemory(b, sc, last) })
	}
}

func exhaustiveMemory(b *testing.B, sc *simulator.Scenario, last int) {
	const first = 2000
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var perSchedule, lastMB float64
	for i := 0; i < b.N; i++ {
		faults := sc.Faults
		faults.Crashes, faults.Stale = 2, 2
		var atFirst, atLast uint64
		rep := Explore(sc, Options{Strategy: StrategyExhaustive, Schedules: last, Workers: 2, Faults: &faults, Progress: func(p Progress) {
			// With two workers the count can pass a mark between two
			// calls; the last call's reading is the end's.
			switch {
			case p.Schedules >= last:
				atLast = live()
			case p.Schedules >= first && atFirst == 0:
				atFirst = live()
			}
		}})
		if rep.Err != nil || rep.Schedules != last || atFirst == 0 || atLast == 0 {
			b.Fatalf("the search ran %d schedules (error %v); it must run %d to be measured", rep.Schedules, rep.Err, last)
		}
		perSchedule += (float64(atLast) - float64(atFirst)) / float64(last-first)
		lastMB += float64(atLast) / (1 << 20)
	}
	b.ReportMetric(perSchedule/float64(b.N), "live-B/schedule")
	b.ReportMetric(lastMB/float64(b.N), "live-MB")
}
