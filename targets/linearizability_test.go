package targets_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// notController selects the actors whose reads are quorum reads: the
// user, the built-in actors and faults. Their reads and every committed
// write must always be linearizable: this is opcheck's self-check of its
// store.
func notController(a model.Actor) bool { return !properties.IsController(a) }

func TestLinearizableQuorumSelfCheck(t *testing.T) {
	schedules := 1000
	if testing.Short() {
		schedules = 50
	}
	for _, sc := range targets.All() {
		sc := sc
		n := schedules
		if strings.HasPrefix(sc.Name, "kuberay/") {
			// KubeRay's real operator makes a schedule about 40 ms long
			// (its reconciles list every pod kind several times); 200 of its
			// schedules exercise the store's API mix as well, and keep CI
			// well under a minute for them.
			n = min(schedules, 200)
		}
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			for i := 0; i < n; i++ {
				res, err := simulator.Run(sc, explore.Uniform(uint64(i)), simulator.RunOptions{KeepGoing: true})
				if err != nil {
					t.Fatal(err)
				}
				lr := properties.CheckLinearizable(res.History, notController)
				if lr.Result != porcupine.Ok {
					t.Fatalf("schedule %d: quorum history is %v, stale reads %v", i, lr.Result, lr.StaleReads)
				}
			}
		})
	}
}

// On the zookeeper seed bug the check of the controller's reads names the
// stale read of the ZookeeperCluster behind the PVC delete.
func TestLinearizableNamesStaleReadOfSeedBug(t *testing.T) {
	res, err := simulator.RunScript(zookeeper.Scenario(zookeeper.Buggy), []simulator.ScriptStep{
		{After: "done: scale zk to 1", Label: "pause apiserver-2 ZookeeperCluster cache"},
		{After: "done: scale zk to 2", Label: "crash controller/zookeeper-operator, restart on apiserver-2"},
		{After: "ReconcileDone", Label: "settle"},
	}, simulator.RunOptions{KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 {
		t.Fatal("the seed-bug schedule did not violate")
	}
	deleteStep := res.Violations[0].Step
	lr := properties.CheckLinearizable(res.History, properties.IsController)
	if lr.Result != porcupine.Illegal {
		t.Fatalf("controller history is %v, want Illegal", lr.Result)
	}
	var named *properties.StaleRead
	for i := range lr.StaleReads {
		r := &lr.StaleReads[i]
		if strings.HasPrefix(r.Key, "ZookeeperCluster ") || strings.Contains(r.Key, "ZookeeperCluster") {
			if r.Step < deleteStep && r.Server == 2 && r.SawRV < r.CommittedRV {
				named = r
			}
		}
	}
	if named == nil {
		t.Fatalf("no stale read of the ZookeeperCluster before the delete at step %d among %v", deleteStep, lr.StaleReads)
	}
	t.Logf("stale read behind the delete: %s", named)

	// And the porcupine visualization of the same history can be written,
	// with the crash and the paused cache annotated.
	var html bytes.Buffer
	if err := properties.WriteVisualization(&html, res.History, properties.IsController, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "ZookeeperCluster") || !strings.Contains(html.String(), "Crash") {
		t.Fatalf("visualization lacks the object or the crash annotation (%d bytes)", html.Len())
	}
}
