package simulator_test

import (
	"testing"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// BenchmarkRunSchedule runs one random schedule of the web operator
// scenario (world_test.go) per iteration and reports scheduler steps per
// second.
func BenchmarkRunSchedule(b *testing.B) {
	b.ReportAllocs()
	total := 0
	for i := 0; i < b.N; i++ {
		res, err := simulator.Run(webScenario(), newRandomChooser(uint64(i)), simulator.RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		total += res.Steps
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(total)/float64(b.N), "steps/op")
}

// BenchmarkRunZookeeperBuggy runs one random schedule of the zookeeper
// buggy scenario (faults included) per iteration.
func BenchmarkRunZookeeperBuggy(b *testing.B) {
	b.ReportAllocs()
	total := 0
	for i := 0; i < b.N; i++ {
		res, err := simulator.Run(zookeeper.Scenario(zookeeper.Buggy), newRandomChooser(uint64(i)), simulator.RunOptions{KeepGoing: true})
		if err != nil {
			b.Fatal(err)
		}
		total += res.Steps
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "steps/s")
}
