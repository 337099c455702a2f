package explore

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// A stale budget of 2 is two watch caches behind at once: the exhaustive
// search pauses a second cache while the first is paused (both stay
// paused until the faults end), so it explores schedules that a budget of
// 1 does not, and more of them. Before, a pause was offered only while no
// cache was paused, so a budget above 1 explored exactly what 1 does.
//
// The caches of two kinds may be paused here (ZookeeperClusters and
// StatefulSets): with no crash in the budget only the caches of
// apiserver-1, where the controller runs, can be observed, and the search
// does not offer a pause that nothing observes (reduction.go, unobserved).
func TestStaleBudgetOfTwoPausesTwoCachesAtOnce(t *testing.T) {
	sc := zookeeper.Scenario(zookeeper.Fixed)
	sc.StaleKinds = []client.Object{&zookeeper.ZookeeperCluster{}, &appsv1.StatefulSet{}}
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
