package casskop

import (
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

func TestScenarioNoFaultsConverges(t *testing.T) {
	for _, v := range Variants() {
		t.Run(string(v), func(t *testing.T) {
			none := model.FaultBudget{}
			// Fair turns (an empty script), no faults.
			res, err := simulator.RunScript(Scenario(v), nil, simulator.RunOptions{Faults: &none})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Violations) > 0 || !res.Quiescent {
				t.Fatalf("violations %v, quiescent %v after %d steps:\n%s", res.Violations, res.Quiescent, res.Steps, res.History.Lines())
			}
			if !strings.Contains(res.History.Lines(), "done: scale cc back to 2 nodes") {
				t.Fatalf("the workload did not complete:\n%s", res.History.Lines())
			}
		})
	}
}

// seedBugScript is the bug report's schedule by hand: the controller
// crashes right after the reconcile that saw the node DECOMMISSIONED
// updated the StatefulSet, before its deferred status write.
var seedBugScript = []simulator.ScriptStep{
	{After: "controller/casskop Update StatefulSet default/cc-dc1-rack1", Label: "crash controller/casskop, restart on apiserver-1"},
}

func runScript(t *testing.T, v Variant) *simulator.Result {
	t.Helper()
	return runWith(t, v, seedBugScript)
}

func violated(vs []properties.Violation, prefix string) *properties.Violation {
	for i := range vs {
		if strings.HasPrefix(vs[i].Property, prefix) {
			return &vs[i]
		}
	}
	return nil
}

func TestSeedBugCrashBuggy(t *testing.T) {
	res := runScript(t, Buggy)
	lines := res.History.Lines()
	// The reconcile fails forever, but with exponential backoff only once
	// after the caches caught up before the run is quiescent: the failures
	// of the fault phase do not count towards NoStuckReconcile (issue 12),
	// so the stuck cluster is reported as not converging.
	if violated(res.Violations, "EventuallyConverges") == nil || violated(res.Violations, "NoStuckReconcile") != nil {
		t.Fatalf("want EventuallyConverges violated (and not NoStuckReconcile), got %v\n%s", res.Violations, lines)
	}
	if strings.Contains(lines, "Delete PersistentVolumeClaim default/data-cc-dc1-rack1-1") {
		t.Fatalf("the PVC of the removed pod was deleted:\n%s", lines)
	}
	// After the restart every reconcile fails: while pod 1 is Terminating
	// (its 30 s grace period) on the node that is leaving, then on the
	// gone pod, forever; and the later change back to 2 nodes is never
	// served.
	_, after, ok := strings.Cut(lines, "fault Restart")
	if !ok {
		t.Fatalf("no restart:\n%s", lines)
	}
	done := 0
	for _, l := range strings.Split(after, "\n") {
		if strings.Contains(l, "controller/casskop ReconcileDone") {
			if !strings.Contains(l, "err=") {
				t.Fatalf("a reconcile after the crash succeeded: %s", l)
			}
			if strings.Contains(l, "Failed to get last pod cc-dc1-rack1-1") {
				done++
			}
		}
	}
	if done < 5 || !strings.Contains(after, "start: scale cc back to 2 nodes") || strings.Contains(after, "done: scale cc back to 2 nodes") {
		t.Fatalf("want >= 5 failing reconciles and the scale back to 2 issued but never served (%d reconciles):\n%s", done, lines)
	}
	t.Log(violated(res.Violations, "EventuallyConverges"))
}

func TestSeedBugCrashUpstreamFix(t *testing.T) {
	res := runScript(t, UpstreamFix)
	if len(res.Violations) > 0 || !res.Quiescent {
		t.Fatalf("violations %v quiescent %v\n%s", res.Violations, res.Quiescent, res.History.Lines())
	}
}

func TestSeedBugCrashFixed(t *testing.T) {
	res := runScript(t, Fixed)
	if len(res.Violations) > 0 || !res.Quiescent {
		t.Fatalf("violations %v quiescent %v\n%s", res.Violations, res.Quiescent, res.History.Lines())
	}
}

// The crash window upstream-fix leaves open: between its early Finalizing
// write and the StatefulSet update (found by the exhaustive explorer; pinned
// here as a hand-written schedule). upstream-fix waits forever for a pod the
// StatefulSet is never told to remove; fixed goes on to the update.
var finalizingWindowScript = []simulator.ScriptStep{
	{After: "OperationMode default/cc-dc1-rack1-1 DECOMMISSIONED", Label: "continue default/cc"},
	{After: "controller/casskop Update CassandraCluster", Label: "crash controller/casskop, restart on apiserver-1"},
}

func runWith(t *testing.T, v Variant, script []simulator.ScriptStep) *simulator.Result {
	t.Helper()
	res, err := simulator.RunScript(Scenario(v), script, simulator.RunOptions{KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFinalizingCrashWindowUpstreamFix(t *testing.T) {
	wantScaleDownStuck(t, runWith(t, UpstreamFix, finalizingWindowScript), "ScaleDown")
}

// wantScaleDownStuck fails t unless res breaks EventuallyConverges with
// the rack's last action, as the explanation names it, matching action.
func wantScaleDownStuck(t *testing.T, res *simulator.Result, action string) {
	t.Helper()
	v := violated(res.Violations, "EventuallyConverges")
	if v == nil {
		t.Fatalf("want EventuallyConverges violated, got %v\n%s", res.Violations, res.History.Lines())
	}
	if !strings.Contains(v.Explanation, action) {
		t.Fatalf("want the scale-down stuck (%s), got:\n%s", action, v)
	}
}

func TestFinalizingCrashWindowFixed(t *testing.T) {
	res := runWith(t, Fixed, finalizingWindowScript)
	if len(res.Violations) > 0 || !res.Quiescent {
		t.Fatalf("violations %v quiescent %v\n%s", res.Violations, res.Quiescent, res.History.Lines())
	}
}

// The change of mind a stale cache stretches (found by `explore check
// -crashes 1 -stale 1 casskop/fixed`): the CassandraCluster watch cache
// pauses right after the user asks for 1 node. The decommission of node 1
// starts and completes, but every status write then conflicts (the
// operator reads the CR from the paused cache), so the user's wait times
// out and they ask for 2 nodes again; when the cache resumes, the rack is
// Finalizing a node that left the ring while the user wants it back.
var staleChangeOfMindScript = []simulator.ScriptStep{
	{After: "user Update CassandraCluster default/cc", Label: "pause apiserver-1 CassandraCluster cache"},
}

func runStaleChangeOfMind(t *testing.T, v Variant) *simulator.Result {
	t.Helper()
	budget := model.FaultBudget{Stale: 1}
	res, err := simulator.RunScript(Scenario(v), staleChangeOfMindScript, simulator.RunOptions{Faults: &budget, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// UpstreamFix keeps the decommissioned node's pod (the StatefulSet is
// already at the 2 replicas the user wants) and stays Finalizing forever.
func TestStaleChangeOfMindUpstreamFix(t *testing.T) {
	wantScaleDownStuck(t, runStaleChangeOfMind(t, UpstreamFix), "ScaleDown/Ongoing")
}

// Fixed removes the decommissioned node as planned, then scales back up
// with a fresh node in its place.
func TestStaleChangeOfMindFixed(t *testing.T) {
	res := runStaleChangeOfMind(t, Fixed)
	lines := res.History.Lines()
	if len(res.Violations) > 0 || !res.Quiescent {
		t.Fatalf("violations %v quiescent %v\n%s", res.Violations, res.Quiescent, lines)
	}
	if !strings.Contains(lines, "fault PauseCache CassandraCluster") || !strings.Contains(lines, "gave up waiting: scale cc to 1 node") {
		t.Fatalf("the script did not stretch the scale-down past the user's wait:\n%s", lines)
	}
	// Node 1 left the ring: its pod goes, and a new one takes its place.
	_, after, _ := strings.Cut(lines, "start: scale cc back to 2 nodes")
	if !strings.Contains(after, "statefulset-controller Delete Pod default/cc-dc1-rack1-1") || !strings.Contains(after, "statefulset-controller Create Pod default/cc-dc1-rack1-1") {
		t.Fatalf("want pod 1 replaced after the change of mind:\n%s", lines)
	}
}
