package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// A stale budget of 2 is two watch caches behind at once: the exhaustive
// search pauses a second cache while the first is paused (both stay
// paused until the faults end), so it explores schedules that a budget of
// 1 does not, and more of them. Before, a pause was offered only while no
// cache was paused, so a budget above 1 explored exactly what 1 does.
func TestStaleBudgetOfTwoPausesTwoCachesAtOnce(t *testing.T) {
	sc := zookeeper.Scenario(zookeeper.Fixed)
	explore := func(stale int) (schedules, twoAtOnce int) {
		b := model.FaultBudget{Stale: stale}
		rep := Explore(sc, Options{Workers: 1, Faults: &b, Visit: func(_ int, _ uint64, res *simulator.Result) {
			paused, most := 0, 0
			for _, e := range res.History.Events {
				switch e.Op {
				case model.OpPauseCache:
					paused++
				case model.OpResumeCache:
					paused--
				}
				most = max(most, paused)
			}
			if most > stale {
				t.Errorf("stale budget %d: a schedule had %d caches paused at once", stale, most)
			}
			if most == 2 {
				twoAtOnce++
			}
		}})
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		if rep.Verdict != VerdictVerified {
			t.Fatalf("stale budget %d: verdict %s, want verified", stale, rep.Verdict)
		}
		return rep.Schedules, twoAtOnce
	}
	one, oneTwice := explore(1)
	two, twoTwice := explore(2)
	if oneTwice != 0 {
		t.Errorf("stale budget 1: %d schedules paused two caches at once", oneTwice)
	}
	if twoTwice == 0 || two <= one {
		t.Errorf("stale budget 2: %d schedules (budget 1: %d), %d of them with two caches paused at once; want more schedules than budget 1 and some with two paused", two, one, twoTwice)
	}
	t.Logf("zookeeper/fixed, no crash: stale 1 %d schedules, stale 2 %d (%d with two caches paused at once)", one, two, twoTwice)
}
