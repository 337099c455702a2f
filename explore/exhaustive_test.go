package explore

import (
	"slices"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

func TestExhaustiveFindsSeedBugs(t *testing.T) {
	for name, want := range map[string]string{
		"zookeeper/buggy": "NoScaleBelow(member StatefulSet)",
		"casskop/buggy":   "EventuallyConverges(rack matches nodesPerRacks)",
	} {
		rep := Explore(lookup(t, name), Options{Strategy: StrategyExhaustive})
		if rep.Verdict != VerdictViolation || rep.Violation.Property != want {
			t.Fatalf("%s: verdict %s %v, want a violation of %s", name, rep.Verdict, rep.Violation, want)
		}
		// The violating schedule replays from its recorded choices.
		res, err := Replay(lookup(t, name), rep.Choices, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) == 0 || res.Violations[0].Property != want {
			t.Fatalf("%s: the recorded schedule did not replay the violation: %v", name, res.Violations)
		}
		t.Logf("%s: %d schedules, %s", name, rep.Schedules, rep.Elapsed)
	}
}

// casskop/fixed is verified within the bounds, with state pruning and
// without it.
func TestExhaustiveVerifiesCasskopFixedWithAndWithoutPruning(t *testing.T) {
	sc := lookup(t, "casskop/fixed")
	with := Explore(sc, Options{})
	without := Explore(sc, Options{NoPrune: true})
	if with.Verdict != VerdictVerified || !with.Complete || without.Verdict != VerdictVerified || !without.Complete {
		t.Fatalf("want both verified: with %s %+v, without %s %+v", with.Verdict, with.Violation, without.Verdict, without.Violation)
	}
	// Whether pruning saves schedules is TestPruningKeepsEveryViolation's
	// question, asked where it does (here it saves none: 29 and 29).
	t.Logf("casskop/fixed: %d schedules with pruning (%d pruned), %d without", with.Schedules, with.Pruned, without.Schedules)
}

// The upstream casskop fix leaves a crash window open (between its early
// Finalizing write and the StatefulSet update): the search finds it.
func TestExhaustiveCasskopUpstreamFixStillStuck(t *testing.T) {
	rep := Explore(lookup(t, "casskop/upstream-fix"), Options{Strategy: StrategyExhaustive})
	if rep.Verdict != VerdictViolation || !strings.HasPrefix(rep.Violation.Property, "EventuallyConverges") {
		t.Fatalf("verdict %s %v, want EventuallyConverges violated", rep.Verdict, rep.Violation)
	}
}

func TestExhaustiveVerifiesZookeeperFixed(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute: the full bounded space of zookeeper/fixed")
	}
	rep := Explore(lookup(t, "zookeeper/fixed"), Options{Strategy: StrategyExhaustive})
	if rep.Verdict != VerdictVerified {
		t.Fatalf("verdict %s (%v) after %d schedules, want verified", rep.Verdict, rep.Violation, rep.Schedules)
	}
	t.Logf("zookeeper/fixed verified: %d schedules, %d states, %s", rep.Schedules, rep.States, rep.Elapsed)
}

// Shards of the exhaustive tree are disjoint and together explore exactly
// the schedules of one unsharded search (without pruning, whose visited
// set is per process).
func TestExhaustiveShardsPartitionTheTree(t *testing.T) {
	sc := lookup(t, "casskop/fixed")
	// Two crashes make the tree deep enough for every shard to own some.
	two := model.FaultBudget{Crashes: 2}
	collect := func(shard, shards int) (all []string) {
		Explore(sc, Options{NoPrune: true, Faults: &two, Shard: shard, Shards: shards, Visit: func(_ int, _ uint64, res *simulator.Result) {
			if !res.World.Pruned() {
				all = append(all, model.FormatChoices(res.Choices))
			}
		}})
		return all
	}
	whole := collect(0, 1)
	var union []string
	for i := 0; i < 3; i++ {
		part := collect(i, 3)
		if len(part) == 0 {
			t.Fatalf("shard %d/3 explored nothing", i)
		}
		union = append(union, part...)
	}
	// Iterative deepening runs the fault-free schedule once per level, so
	// the lists are multisets: equal multisets mean every schedule of the
	// unsharded search ran in exactly one shard, as often.
	slices.Sort(whole)
	slices.Sort(union)
	if !slices.Equal(whole, union) {
		t.Fatalf("shards explored %d schedules, the unsharded search %d", len(union), len(whole))
	}
	if len(whole) < 10 {
		t.Fatalf("only %d schedules: the test shows nothing", len(whole))
	}
}

func TestExhaustiveDeterminismCheck(t *testing.T) {
	r := Explore(lookup(t, "casskop/fixed"), Options{CheckDeterminism: true, Schedules: 10})
	if r.Err != nil || r.Schedules != 10 {
		t.Fatalf("%s after %d schedules, want 10 schedules run: %v", r.Verdict, r.Schedules, r.Err)
	}
}

// The exhaustive search's determinism check catches a reconciler whose
// behaviour depends on hidden state across runs, as the random one does.
func TestExhaustiveDeterminismCheckCatchesHiddenState(t *testing.T) {
	r := Explore(hiddenStateScenario(t), Options{CheckDeterminism: true, Schedules: 10, Workers: 1}) // one worker: see TestCheckDeterminism
	if r.Verdict != VerdictError || r.Err == nil || !strings.Contains(r.Err.Error(), "not deterministic") {
		t.Fatalf("verdict %s after %d schedules, err %v: want a determinism error", r.Verdict, r.Schedules, r.Err)
	}
}
