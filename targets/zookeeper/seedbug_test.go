package zookeeper

import (
	"strings"
	"testing"

	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// seedBugScript is the schedule of the bug report, written by hand: the
// ZookeeperCluster cache of apiserver-2 stops once the scale-down to 1 is
// done; the user scales back to 2; once 2 members are ready the controller
// crashes and restarts against apiserver-2; after its first reconcile there
// the faults end.
var seedBugScript = []simulator.ScriptStep{
	{After: "done: scale zk to 1", Label: "pause apiserver-2 ZookeeperCluster cache"},
	{After: "done: scale zk to 2", Label: "crash controller/zookeeper-operator, restart on apiserver-2"},
	{After: "ReconcileDone", Label: "settle"},
}

func runScript(t *testing.T, v Variant, script []simulator.ScriptStep) *simulator.Result {
	t.Helper()
	res, err := simulator.RunScript(Scenario(v), script, simulator.RunOptions{KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func violated(vs []properties.Violation, name string) *properties.Violation {
	for i := range vs {
		if strings.Contains(vs[i].Property, name) {
			return &vs[i]
		}
	}
	return nil
}

func TestSeedBugStaleReadBuggy(t *testing.T) {
	res := runScript(t, Buggy, seedBugScript)
	lines := res.History.Lines()
	if !strings.Contains(lines, "controller/zookeeper-operator Delete PersistentVolumeClaim default/data-zk-1") {
		t.Fatalf("the live member's PVC was not deleted:\n%s", lines)
	}
	pvc := violated(res.Violations, "NoDeleteOfLive")
	if pvc == nil {
		t.Fatalf("NoDeleteOfLive not violated; violations %v\n%s", res.Violations, lines)
	}
	scale := violated(res.Violations, "NoScaleBelow")
	if scale == nil {
		t.Fatalf("NoScaleBelow not violated; violations %v\n%s", res.Violations, lines)
	}
	t.Logf("%s\n%s", pvc, scale)
}

// On the fix variants the same schedule must not scale the StatefulSet
// below the committed size; upstream-fix still deletes the live member's
// PVC (its guard covers only the StatefulSet path), fixed issues no delete.
func TestSeedBugStaleReadUpstreamFix(t *testing.T) {
	res := runScript(t, UpstreamFix, seedBugScript)
	lines := res.History.Lines()
	if v := violated(res.Violations, "NoScaleBelow"); v != nil {
		t.Fatalf("upstream-fix scaled below the committed size: %s", v)
	}
	if !strings.Contains(lines, "Staleness: cr.ResourceVersion") {
		t.Fatalf("upstream-fix did not detect the stale CR:\n%s", lines)
	}
	// What remains: the orphan-PVC cleanup runs before the guard.
	if v := violated(res.Violations, "NoDeleteOfLive"); v == nil {
		t.Fatalf("upstream-fix was expected to still delete the live member's PVC (see docs/case-studies.md); violations %v\n%s", res.Violations, lines)
	}
}

func TestSeedBugStaleReadFixed(t *testing.T) {
	res := runScript(t, Fixed, seedBugScript)
	lines := res.History.Lines()
	// The scale-down to 1 legitimately deletes data-zk-1; after the
	// restart against the stale apiserver no delete may be issued.
	_, afterRestart, ok := strings.Cut(lines, "fault Restart")
	if !ok {
		t.Fatalf("no restart in the history:\n%s", lines)
	}
	if strings.Contains(afterRestart, "controller/zookeeper-operator Delete PersistentVolumeClaim") {
		t.Fatalf("fixed issued a PVC delete after the stale restart:\n%s", lines)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("fixed violated: %v\n%s", res.Violations, lines)
	}
	if !res.Quiescent {
		t.Fatalf("fixed did not settle:\n%s", lines)
	}
}
