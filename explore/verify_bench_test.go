package explore

import "testing"

// BenchmarkVerify measures what an operator's own `go test` pays to verify
// a fixed operator: one op is the exhaustive search Check runs by default
// (DefaultOptions: the scenario's default bounds, one worker per
// processor, stop at the first violation), and it must end verified.
// It runs under the collector tuning every Explore applies (gc.go), as a
// user's test does; GOGC=100 in the environment turns the tuning off and
// measures go test's default. Run it once per scenario:
//
//	go test -run '^$' -bench BenchmarkVerify -benchtime 1x ./explore/
//	GOGC=100 go test -run '^$' -bench BenchmarkVerify -benchtime 1x ./explore/
//
// It reports schedules/s over the search and ns/op, the search's wall
// time.
func BenchmarkVerify(b *testing.B) {
	for _, name := range []string{"casskop/fixed", "zookeeper/fixed"} {
		b.Run(name, func(b *testing.B) {
			sc := lookup(b, name)
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
