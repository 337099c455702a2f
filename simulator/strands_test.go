package simulator_test

import (
	"fmt"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// strandWatcher takes ordinary steps and no fault, except that it pauses
// apiserver pauseOn's ZookeeperCluster cache at the first decision after
// the ZookeeperCluster was created. From the pause on it notes, per
// decision, which crash options were marked StrandsPause and whether a
// ZookeeperCluster was written since the pause (the cache fell behind).
type strandWatcher struct {
	pauseOn int
	created bool
	paused  bool
	written bool // a ZookeeperCluster write committed after the pause
	// per decision after the pause: the servers of the crash options that
	// strand it, and whether the cache was behind then
	strands [][]int
	behind  []bool
}

func (p *strandWatcher) Choose(d model.Decision) int {
	if d.Kind != model.ChooseStep {
		return 0
	}
	for _, ev := range d.Since {
		if ev.Kind == "ZookeeperCluster" && ev.Op.IsWrite() && ev.Err == "" && ev.Rev > 0 {
			if p.paused {
				p.written = true
			}
			p.created = true
		}
	}
	ordinary, pause := -1, -1
	var strands []int
	for i, o := range d.Options {
		if ordinary < 0 && (o.Actor != model.ActorFault || o.Class == model.StepSettle) {
			ordinary = i
		}
		if o.Fault == model.FaultStale && o.Label == fmt.Sprintf("pause apiserver-%d ZookeeperCluster cache", p.pauseOn) {
			pause = i
		}
		if o.Fault == model.FaultCrash && o.StrandsPause {
			strands = append(strands, o.Server)
		}
	}
	if p.paused {
		p.strands = append(p.strands, strands)
		p.behind = append(p.behind, p.written)
	}
	if !p.paused && p.created && pause >= 0 {
		p.paused = true
		return pause
	}
	return max(ordinary, 0)
}

// A crash strands a pause (model.Option.StrandsPause) exactly when it is
// the budget's last and it leaves a paused cache that nothing read behind
// the store on an apiserver no controller will be bound to and whose
// caches no client reads. Here the controller is bound to apiserver-1.
// With apiserver-1's ZookeeperCluster cache paused after the create, the
// restart on apiserver-2 strands it until the next ZookeeperCluster write
// (the controller then reads the cache behind the store), and never after.
// With apiserver-2's paused, which nobody is bound to, the restart on
// apiserver-1 strands it at every decision: nothing ever reads it.
// Mutations tried: ignoring the seen mark, the crash budget, the cache
// reader, and the restart's apiserver each fail a case.
func TestCrashStrandsAPauseNothingRead(t *testing.T) {
	cases := []struct {
		name    string
		crashes int
		pauseOn int
		reader  int // an apiserver a client of Cluster.Client reads the caches of (0: none)
		// strandsOn: the apiserver of the only restart that strands the
		// pause (0: none does); untilBehind: only until the cache falls
		// behind the store.
		strandsOn   int
		untilBehind bool
	}{
		{"the last crash, the bound apiserver's cache paused", 1, 1, 0, 2, true},
		{"a cache reader elsewhere changes nothing", 1, 1, 2, 2, true},
		{"a crash left after it: a restart could come back", 2, 1, 0, 0, false},
		{"a client reads apiserver-1's caches", 1, 1, 1, 0, false},
		{"the paused cache is on an apiserver nobody is bound to", 1, 2, 0, 1, false},
		{"a client reads the unbound apiserver's caches", 1, 2, 2, 0, false},
		{"a crash left, the cache on the unbound apiserver", 2, 2, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := zookeeperFixedReadingCaches(model.FaultBudget{Crashes: c.crashes, Stale: 1}, c.reader)
			p := &strandWatcher{pauseOn: c.pauseOn}
			if _, err := simulator.Run(sc, p, simulator.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if !p.paused || !p.written {
				t.Fatalf("paused %v, a ZookeeperCluster written after the pause %v: the run does not test what it is for", p.paused, p.written)
			}
			stranding, afterBehind := 0, 0
			for i, servers := range p.strands {
				for _, s := range servers {
					if s != c.strandsOn {
						t.Errorf("decision %d after the pause: the restart on apiserver-%d strands the pause, want only apiserver-%d's", i, s, c.strandsOn)
					}
				}
				wanted := c.strandsOn != 0 && !(c.untilBehind && p.behind[i])
				switch {
				case len(servers) > 0 && !wanted && p.behind[i]:
					afterBehind++
				case len(servers) > 0:
					stranding++
				case wanted:
					t.Errorf("decision %d after the pause (cache behind the store: %v): no crash strands it", i, p.behind[i])
				}
			}
			if afterBehind > 0 {
				t.Errorf("%d decisions after the paused cache fell behind offer a crash that strands it", afterBehind)
			}
			if want := c.strandsOn != 0; want != (stranding > 0) {
				t.Errorf("%d decisions offer a crash that strands the pause, want some: %v", stranding, want)
			}
			t.Logf("%d decisions after the pause, %d of them with a stranding crash", len(p.strands), stranding)
		})
	}
}
