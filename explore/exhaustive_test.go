package explore

import (
	"fmt"
	"hash"
	"slices"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
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

// The shards of an exhaustive search share its work: each gets a fair
// part of zookeeper/fixed's schedules. (Split by the options of the first
// two fault decisions, as they once were, nearly every schedule fell to
// shard 0: 801 and 54 of them.)
func TestExhaustiveShardsShareTheWork(t *testing.T) {
	sc := lookup(t, "zookeeper/fixed")
	b := model.FaultBudget{Crashes: 1, Stale: 1}
	whole := Explore(sc, Options{Faults: &b, Workers: 1})
	for shards := 2; shards <= 3; shards++ {
		for shard := 0; shard < shards; shard++ {
			rep := Explore(sc, Options{Faults: &b, Workers: 1, Shard: shard, Shards: shards})
			if own := rep.Schedules - rep.Skipped; rep.Verdict != VerdictVerified || own < whole.Schedules/(2*shards) {
				t.Errorf("shard %d/%d: %s, %d schedules of its own; the unsharded search ran %d", shard, shards, rep.Verdict, own, whole.Schedules)
			}
		}
	}
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
	// The one search runs every schedule once (iterative deepening ran
	// the lower fault counts' again at every level): equal lists without
	// repeats mean every schedule of the unsharded search ran in exactly
	// one shard, once.
	slices.Sort(whole)
	slices.Sort(union)
	if !slices.Equal(whole, union) {
		t.Fatalf("shards explored %d schedules, the unsharded search %d", len(union), len(whole))
	}
	if n := len(slices.Compact(slices.Clone(union))); n != len(union) {
		t.Fatalf("the shards ran %d schedules, %d of them distinct: a schedule ran twice", len(union), n)
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

// searchOutcome is what the one search must report as the iterative
// deepening of Options.perLevel does: the verdict and, for a violation,
// the violated property, the choices and the history, byte for byte. Where
// the scenario declares KnownNondeterminism (KubeRay reads its expected
// pods in map order), the history's writes stand for it: the order of the
// cached reads varies between two runs of the same choices, in either
// search.
func searchOutcome(t *testing.T, sc *simulator.Scenario, rep Report) string {
	t.Helper()
	if rep.Err != nil {
		t.Fatalf("%s: %v", sc.Name, rep.Err)
	}
	if rep.Violation == nil {
		return rep.Verdict
	}
	history := rep.History.Lines()
	if sc.KnownNondeterminism != "" {
		var writes []string
		for i := range rep.History.Events {
			if e := &rep.History.Events[i]; e.Change != model.ChangeNone {
				writes = append(writes, e.Line())
			}
		}
		history = "writes:\n" + strings.Join(writes, "\n")
	}
	return rep.Verdict + " " + rep.Violation.Property + "\n" + model.FormatChoices(rep.Choices) + "\n" + history
}

// crashesAtMost is violated at Settle by a schedule with more than n
// crashes: with a budget above n, the smallest violating schedules have
// n+1 faults, and many with more faults come before them depth first.
func crashesAtMost(n int) properties.Property {
	return properties.Property{Name: fmt.Sprintf("CrashesAtMost%d", n), NewMonitor: func() properties.Monitor {
		crashes := 0
		return properties.Fingerprinted(properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
			switch e.Op {
			case model.OpCrash:
				crashes++
			case model.OpSettle:
				if crashes > n {
					return &properties.Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("%d crashes struck", crashes)}
				}
			}
			return nil
		}), func(h hash.Hash64) { h.Write([]byte{byte(crashes)}) })
	}}
}

// The one search over every number of faults reports what iterative
// deepening on the number of faults (Options.perLevel: a search per fault
// count, each re-running the lower counts' schedules) reports, on every
// shipped scenario with its own budget and on the small scenarios of the
// explore tests, among them ones whose first violation needs two faults,
// and ones where the step bound undoes a merge (the search runs again).
// With one worker both are the sequential searches.
func TestOneSearchMatchesIterativeDeepening(t *testing.T) {
	type testCase struct {
		name      string
		sc        func() *simulator.Scenario
		faults    *model.FaultBudget
		keepGoing bool // to the end of the bounds, past the first violation
		long      bool
	}
	var cases []testCase
	for _, sc := range targets.All() {
		// zookeeper/fixed's default bounds take about 60 s for the one
		// search and more for iterative deepening on one worker: it runs
		// with a crash and an eviction here (999 schedules), and its
		// default bounds in TestExhaustiveVerifiesZookeeperFixed.
		var faults *model.FaultBudget
		if sc.Name == "zookeeper/fixed" {
			faults = &model.FaultBudget{Crashes: 1, Evictions: 1}
		}
		cases = append(cases, testCase{sc.Name, func() *simulator.Scenario { return lookup(t, sc.Name) }, faults, false, false})
	}
	crashes := func(n int) *model.FaultBudget { return &model.FaultBudget{Crashes: n} }
	cases = append(cases,
		testCase{"idle NoCrash", func() *simulator.Scenario { return idleScenario(noCrash()) }, crashes(2), false, false},
		testCase{"idle CrashesAtMost1", func() *simulator.Scenario { return idleScenario(crashesAtMost(1)) }, crashes(3), false, false},
		testCase{"idle CrashesAtMost2", func() *simulator.Scenario { return idleScenario(crashesAtMost(2)) }, crashes(3), false, false},
		testCase{"idle NoCrashBeforeSecond", func() *simulator.Scenario { return idleScenario(crashBeforeSecond(false)) }, crashes(2), false, false},
		// The step bound undoes a merge: the search runs again.
		testCase{"depth 34", func() *simulator.Scenario { return depthScenario(34) }, crashes(2), true, false},
		testCase{"depth 35", func() *simulator.Scenario { return depthScenario(35) }, nil, true, false},
		testCase{"depth", func() *simulator.Scenario { return depthScenario(0) }, crashes(2), false, false},
		testCase{"flip", flipScenario, nil, false, false},
		testCase{"casskop/buggy crashes=2 stale=1", func() *simulator.Scenario { return lookup(t, "casskop/buggy") }, &model.FaultBudget{Crashes: 2, Stale: 1}, false, false},
		testCase{"casskop/fixed crashes=2", func() *simulator.Scenario { return lookup(t, "casskop/fixed") }, crashes(2), false, false},
		testCase{"casskop/fixed crashes=2 stale=1", func() *simulator.Scenario { return lookup(t, "casskop/fixed") }, &model.FaultBudget{Crashes: 2, Stale: 1}, false, true},
	)
	violations, reexplored := 0, 0
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		sc := c.sc()
		one := Explore(sc, Options{Workers: 1, Faults: c.faults, keepGoing: c.keepGoing})
		levels := Explore(c.sc(), Options{Workers: 1, Faults: c.faults, keepGoing: c.keepGoing, perLevel: true})
		a, b := searchOutcome(t, sc, one), searchOutcome(t, sc, levels)
		if a != b {
			t.Errorf("%s: the one search and iterative deepening differ:\n--- one search (%d schedules)\n%s\n--- iterative deepening (%d schedules)\n%s", c.name, one.Schedules, a, levels.Schedules, b)
		}
		if one.Verdict == VerdictInconclusive {
			t.Errorf("%s: inconclusive after %d schedules: the case shows nothing", c.name, one.Schedules)
		}
		if one.Schedules > levels.Schedules || one.Steps > levels.Steps {
			t.Errorf("%s: the one search ran %d schedules (%d steps), more than iterative deepening's %d (%d steps)", c.name, one.Schedules, one.Steps, levels.Schedules, levels.Steps)
		}
		if one.Violation != nil {
			violations++
		}
		reexplored += one.Reexplored
		t.Logf("%s: %s; one search %d schedules (%d pruned, %d steps, re-explored %d), iterative deepening %d (%d pruned, %d steps, re-explored %d)", c.name, one.Verdict,
			one.Schedules, one.Pruned, one.Steps, one.Reexplored, levels.Schedules, levels.Pruned, levels.Steps, levels.Reexplored)
	}
	if violations == 0 || violations == len(cases) || reexplored == 0 {
		t.Fatalf("%d of %d cases violated, %d re-explored: the cases do not cover violations, verified scenarios and the search run again", violations, len(cases), reexplored)
	}
}

// With one worker, the one search runs exactly the schedules of the last
// level of iterative deepening (the search with the whole budget), cut
// short at the same states, in another order: the fingerprint carries the
// faults left, so only paths with as many faults merge, and among those
// both searches go depth first. The levels below the last are the re-runs
// the one search saves.
func TestOneSearchIsTheLastLevelReordered(t *testing.T) {
	cases := []struct {
		name   string
		sc     func() *simulator.Scenario
		faults model.FaultBudget
	}{
		{"casskop/fixed", func() *simulator.Scenario { return lookup(t, "casskop/fixed") }, model.FaultBudget{Crashes: 2}},
		{"casskop/fixed", func() *simulator.Scenario { return lookup(t, "casskop/fixed") }, model.FaultBudget{Crashes: 1, Stale: 1}},
		{"depth", func() *simulator.Scenario { return depthScenario(0) }, model.FaultBudget{Crashes: 2}},
	}
	for _, c := range cases {
		schedules := func(perLevel bool) (runs []string, rep Report) {
			rep = Explore(c.sc(), Options{Workers: 1, Faults: &c.faults, perLevel: perLevel, Visit: func(_ int, _ uint64, res *simulator.Result) {
				runs = append(runs, fmt.Sprintf("%s pruned=%v steps=%d", model.FormatChoices(res.Choices), res.World.Pruned(), res.Steps))
			}})
			if rep.Verdict != VerdictVerified || rep.Reexplored != 0 {
				t.Fatalf("%s with %s: verdict %s, re-explored %d: want verified in one pass", c.name, &c.faults, rep.Verdict, rep.Reexplored)
			}
			return runs, rep
		}
		one, oneRep := schedules(false)
		levels, levelsRep := schedules(true)
		// Every level starts with the fault-free schedule, which no other
		// schedule repeats: the last level starts at its last run.
		last := 0
		for i, r := range levels {
			if r == levels[0] {
				last = i
			}
		}
		if last == 0 || len(one) != oneRep.Schedules || len(levels) != levelsRep.Schedules {
			t.Fatalf("%s with %s: the levels were not told apart (%d runs, last level from %d)", c.name, &c.faults, len(levels), last)
		}
		lastLevel := slices.Clone(levels[last:])
		slices.Sort(lastLevel)
		sorted := slices.Clone(one)
		slices.Sort(sorted)
		if !slices.Equal(sorted, lastLevel) {
			t.Errorf("%s with %s: the one search ran %d schedules, the last level %d, not the same ones", c.name, &c.faults, len(one), len(lastLevel))
		}
		if len(slices.Compact(sorted)) != len(one) {
			t.Errorf("%s with %s: the one search ran a schedule twice", c.name, &c.faults)
		}
		if slices.Equal(one, levels[last:]) {
			t.Errorf("%s with %s: the one search ran the last level's schedules in the same order: the faults-first order shows nothing here", c.name, &c.faults)
		}
		t.Logf("%s with %s: one search %d schedules (%d pruned), iterative deepening %d, its last level %d", c.name, &c.faults, len(one), oneRep.Pruned, len(levels), len(levels)-last)
	}
}
