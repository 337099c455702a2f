package explore

import (
	"testing"

	"github.com/opcheck/opcheck/targets"
)

// BenchmarkVerify measures what an operator's own `go test` pays to verify
// a fixed operator: one op is the exhaustive search Check runs by default
// (DefaultOptions: the scenario's default bounds, one worker per
// processor, stop at the first violation), and it must end verified.
// Unlike the CLI (explore.Main), a test binary does not tune the garbage
// collector for the whole process, so this is the figure a user's test
// sees. Run it once per scenario:
//
//	go test -run '^$' -bench BenchmarkVerify -benchtime 1x ./explore/
//
// It reports schedules/s over the search and ns/op, the search's wall
// time.
func BenchmarkVerify(b *testing.B) {
	for _, name := range []string{"casskop/fixed", "zookeeper/fixed"} {
		b.Run(name, func(b *testing.B) {
			sc, err := targets.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			schedules := 0
			for i := 0; i < b.N; i++ {
				opts := DefaultOptions()
				rep := Explore(sc, opts)
				if rep.Err != nil || rep.Verdict != VerdictVerified {
					b.Fatalf("%s: verdict %s (error %v) after %d schedules; the benchmark measures a verification", name, rep.Verdict, rep.Err, rep.Schedules)
				}
				schedules += rep.Schedules
			}
			b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(schedules)/float64(b.N), "schedules/op")
		})
	}
}
