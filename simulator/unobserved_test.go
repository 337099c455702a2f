package simulator_test

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// pauseWatcher takes the first ordinary step (or the settle decision) at
// every decision, no fault, except that it takes the first crash offered that restarts on apiserver
// crashTo (0: none). It notes, per decision, which apiservers' pause
// options were marked Unobserved and which were not.
type pauseWatcher struct {
	crashTo    int
	crashed    bool
	unobserved [][]int // per decision, the servers of unobserved pauses
	observed   [][]int
}

func (p *pauseWatcher) Choose(d model.Decision) int {
	if d.Kind != model.ChooseStep {
		return 0
	}
	var un, ob []int
	ordinary, crash := -1, -1
	for i, o := range d.Options {
		if ordinary < 0 && (o.Actor != model.ActorFault || o.Class == model.StepSettle) {
			ordinary = i
		}
		if o.Fault == model.FaultStale {
			server := serverOfPause(o.Label)
			if o.Unobserved {
				un = append(un, server)
			} else {
				ob = append(ob, server)
			}
		}
		if o.Fault == model.FaultCrash && o.Server == p.crashTo && !p.crashed && crash < 0 {
			crash = i
		}
	}
	pick := max(ordinary, 0)
	if crash >= 0 {
		pick, p.crashed = crash, true
	}
	p.unobserved = append(p.unobserved, un)
	p.observed = append(p.observed, ob)
	return pick
}

// serverOfPause reads the apiserver number out of a pause step's label
// ("pause apiserver-2 ZookeeperCluster cache").
func serverOfPause(label string) int {
	for i := 0; i+len("apiserver-") < len(label); i++ {
		if label[i:i+len("apiserver-")] == "apiserver-" {
			return int(label[i+len("apiserver-")] - '0')
		}
	}
	return 0
}

// A pause is marked Unobserved exactly when nothing can read the paused
// cache before the faults end: its apiserver has no controller bound to it
// and no client reading its caches, and no crash is left to restart a
// controller onto it. Mutations tried: ignoring the crash budget, ignoring
// the bound hosts, and ignoring Cluster.Client's cache readers each fail
// one of the cases.
func TestPauseUnobservedOnlyWhereNothingReadsTheCache(t *testing.T) {
	cases := []struct {
		name    string
		faults  model.FaultBudget
		crashTo int
		reader  int // an apiserver a client of Cluster.Client reads the caches of (0: none)
		// want: the servers whose pauses are unobserved at the first
		// decision and at the last one
		first, last []int
	}{
		{"no crash: apiserver-2 is read by nobody", model.FaultBudget{Stale: 1}, 0, 0, []int{2}, []int{2}},
		{"a crash left: a restart could bind to either", model.FaultBudget{Crashes: 1, Stale: 1}, 0, 0, nil, nil},
		{"after a restart on apiserver-2: apiserver-1 is read by nobody", model.FaultBudget{Crashes: 1, Stale: 1}, 2, 0, nil, []int{1}},
		{"a cache reader on apiserver-2", model.FaultBudget{Stale: 1}, 0, 2, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := zookeeperFixedReadingCaches(c.faults, c.reader)
			p := &pauseWatcher{crashTo: c.crashTo}
			if _, err := simulator.Run(sc, p, simulator.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if c.crashTo != 0 && !p.crashed {
				t.Fatalf("no crash restarting on apiserver-%d was offered", c.crashTo)
			}
			// The last decision that offered a pause.
			last := -1
			for i := range p.unobserved {
				if len(p.unobserved[i])+len(p.observed[i]) > 0 {
					last = i
				}
			}
			if last < 0 || len(p.unobserved[0])+len(p.observed[0]) == 0 {
				t.Fatalf("no pause offered at the first decision or later (last %d)", last)
			}
			if got := p.unobserved[0]; !equalInts(got, c.first) {
				t.Errorf("first decision: unobserved pauses on %v, want %v (observed: %v)", got, c.first, p.observed[0])
			}
			if got := p.unobserved[last]; !equalInts(got, c.last) {
				t.Errorf("decision %d: unobserved pauses on %v, want %v (observed: %v)", last, got, c.last, p.observed[last])
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// zookeeperFixedReadingCaches is zookeeper/fixed with faults and, when
// reader is not 0, a client of Cluster.Client that reads apiserver
// reader's watch caches (not quorum), so that a pause there is observable.
func zookeeperFixedReadingCaches(faults model.FaultBudget, reader int) *simulator.Scenario {
	sc := zookeeper.Scenario(zookeeper.Fixed)
	sc.Faults = faults
	if reader != 0 {
		actors := sc.Actors
		sc.Actors = func(w *simulator.World) []simulator.Actor {
			w.Client("cache-reader", reader, false)
			return actors(w)
		}
	}
	return sc
}
