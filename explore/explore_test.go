package explore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/targets/casskop"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func lookup(t testing.TB, name string) *simulator.Scenario {
	t.Helper()
	sc, err := targets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func drain(c model.Chooser, kind model.ChoiceKind, ns []int) []int {
	out := make([]int, len(ns))
	for i, n := range ns {
		out[i] = c.Choose(model.Decision{Kind: kind, Options: make([]model.Option, n)})
	}
	return out
}

func TestChoosersAreSeededAndInRange(t *testing.T) {
	ns := make([]int, 500)
	for i := range ns {
		ns[i] = 1 + i%9
	}
	for _, mk := range []struct {
		name string
		new  func(seed uint64) model.Chooser
	}{
		{"random", Random},
		{"pct", func(s uint64) model.Chooser { return PCT(s, 3, 100) }},
	} {
		a := drain(mk.new(7), model.ChooseStep, ns)
		b := drain(mk.new(7), model.ChooseStep, ns)
		c := drain(mk.new(8), model.ChooseStep, ns)
		if !slices.Equal(a, b) {
			t.Errorf("%s: seed 7 gave two different streams", mk.name)
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same stream", mk.name)
		}
		for i, v := range a {
			if v < 0 || v >= ns[i] {
				t.Fatalf("%s: choice %d is %d, want [0,%d)", mk.name, i, v, ns[i])
			}
		}
	}
}

func TestRandomIsUniformUnbound(t *testing.T) {
	c := Random(3)
	var counts [4]int
	for i := 0; i < 40000; i++ {
		counts[c.Choose(decide(4))]++
	}
	for v, n := range counts {
		if n < 9000 || n > 11000 {
			t.Errorf("value %d taken %d times of 40000, want about 10000: %v", v, n, counts)
		}
	}
}

// PCT without change points runs the highest-priority position whenever it
// is enabled: with the same alternatives it always answers the same.
func TestPCTDepthOneIsAFixedPriorityOrder(t *testing.T) {
	c := PCT(11, 1, 100)
	first := c.Choose(decide(5))
	for i := 0; i < 50; i++ {
		if got := c.Choose(decide(5)); got != first {
			t.Fatalf("choice %d: %d, want the top priority %d every time", i, got, first)
		}
	}
	// With change points the top position is demoted at some step.
	c = PCT(11, 4, 20)
	seen := map[int]bool{}
	for i := 0; i < 40; i++ {
		seen[c.Choose(decide(5))] = true
	}
	if len(seen) < 2 {
		t.Errorf("PCT depth 4 over 20 steps never changed its top position: %v", seen)
	}
}

func TestFindsSeedBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("explores up to 2000 schedules per scenario")
	}
	for _, tc := range []struct{ name, prop string }{
		{"zookeeper/buggy", "No"}, // NoDeleteOfLive or NoScaleBelow
		{"casskop/buggy", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := lookup(t, tc.name)
			opts := DefaultOptions()
			opts.Strategy, opts.Seed = StrategyRandom, 1
			rep := Explore(sc, opts)
			if rep.Verdict != VerdictViolation || rep.Violation == nil {
				t.Fatalf("no violation in %d schedules (verdict %s, err %v)", rep.Schedules, rep.Verdict, rep.Err)
			}
			if !strings.HasPrefix(rep.Violation.Property, tc.prop) {
				t.Errorf("violated %s, want a %s... property", rep.Violation.Property, tc.prop)
			}
			t.Logf("%s: %s after %d schedules (index %d, seed %d), %v", tc.name, rep.Violation.Property, rep.Schedules, rep.Index, rep.Seed, rep.Elapsed)
			if rep.Schedules != rep.Index+1 || rep.Seed != opts.Seed+uint64(rep.Index) {
				t.Errorf("schedules %d, index %d, seed %d: want schedules = index+1 and seed = Seed+index", rep.Schedules, rep.Index, rep.Seed)
			}
			// The recipe: the violating schedule alone, by its own seed.
			again := Explore(sc, Options{Strategy: opts.Strategy, Seed: rep.Seed, Schedules: 1, StopAtFirst: true})
			if again.Violation == nil || again.Violation.Property != rep.Violation.Property || again.Violation.Step != rep.Violation.Step {
				t.Fatalf("replaying seed %d alone gave %v, want %s at step %d", rep.Seed, again.Violation, rep.Violation.Property, rep.Violation.Step)
			}
			if again.History.Lines() != rep.History.Lines() {
				t.Errorf("replaying seed %d alone gave a different history", rep.Seed)
			}
			// And the recorded choices replay it too.
			res, err := Replay(sc, rep.Choices, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.History.Lines() != rep.History.Lines() {
				t.Errorf("replaying the recorded choices gave a different history")
			}
		})
	}
}

func TestFixedVariantsShowNoViolation(t *testing.T) {
	if testing.Short() {
		t.Skip("explores 200 schedules per scenario")
	}
	for _, name := range []string{"zookeeper/fixed", "casskop/fixed"} {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Strategy, opts.Schedules, opts.Seed = StrategyRandom, 200, 1
			rep := Explore(lookup(t, name), opts)
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			if rep.Violation != nil {
				t.Fatalf("%s", Recipe(rep))
			}
			if rep.Schedules != 200 || rep.States == 0 {
				t.Errorf("ran %d schedules reaching %d states, want 200 and some", rep.Schedules, rep.States)
			}
		})
	}
}

func TestShardsPartitionTheSchedules(t *testing.T) {
	sc := lookup(t, "casskop/buggy")
	const budget = 12
	visit := func(shard, shards int) (idx []int, seeds map[int]uint64) {
		seeds = map[int]uint64{}
		opts := Options{Strategy: StrategyRandom, Schedules: budget, Seed: 40, Shard: shard, Shards: shards, Visit: func(i int, seed uint64, res *simulator.Result) {
			idx = append(idx, i)
			seeds[i] = seed
		}}
		rep := Explore(sc, opts)
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		if rep.Schedules != len(idx) {
			t.Errorf("shard %d/%d: report says %d schedules, visited %d", shard, shards, rep.Schedules, len(idx))
		}
		return idx, seeds
	}
	all, allSeeds := visit(0, 1)
	if len(all) != budget {
		t.Fatalf("unsharded run visited %v, want 0..%d", all, budget-1)
	}
	var union []int
	owner := map[int]int{}
	for s := 0; s < 3; s++ {
		idx, seeds := visit(s, 3)
		for _, i := range idx {
			if o, dup := owner[i]; dup {
				t.Errorf("schedule %d run by shards %d and %d", i, o, s)
			}
			owner[i] = s
			if i%3 != s {
				t.Errorf("schedule %d run by shard %d, want shard %d", i, s, i%3)
			}
			if seeds[i] != allSeeds[i] {
				t.Errorf("schedule %d has seed %d in shard %d, %d unsharded", i, seeds[i], s, allSeeds[i])
			}
		}
		union = append(union, idx...)
	}
	slices.Sort(union)
	if !slices.Equal(union, all) {
		t.Errorf("union of shards %v, want %v", union, all)
	}
	if rep := Explore(sc, Options{Schedules: 3, Shard: 3, Shards: 3}); rep.Verdict != VerdictError {
		t.Errorf("shard 3/3 accepted, verdict %s", rep.Verdict)
	}
}

func TestCheckDeterminism(t *testing.T) {
	// A clean scenario: every schedule run twice, same history.
	sc := lookup(t, "casskop/upstream-fix")
	inner := sc.Controllers[0].NewWithEnv
	worlds := 0
	sc.Controllers[0].NewWithEnv = func(env *simulator.Env) reconcile.Reconciler {
		worlds++
		return inner(env)
	}
	rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 3, Seed: 5, CheckDeterminism: true, Workers: 1}) // one worker: worlds is counted unguarded
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if rep.Schedules != 3 || worlds < 6 {
		t.Errorf("schedules %d, reconcilers built %d: want 3 schedules, each run twice", rep.Schedules, worlds)
	}

	// One worker: the hidden state alternates with every world built, so
	// the two runs of a schedule differ only when no other schedule's
	// worlds are built in between (with several workers they interleave,
	// and the toggle itself would be a data race).
	rep = Explore(hiddenStateScenario(t), Options{Strategy: StrategyRandom, Schedules: 3, Seed: 5, CheckDeterminism: true, Workers: 1})
	if rep.Verdict != VerdictError || rep.Err == nil || !strings.Contains(rep.Err.Error(), "not deterministic") {
		t.Fatalf("verdict %s, err %v: want a determinism error", rep.Verdict, rep.Err)
	}
	t.Log(rep.Err)
}

// hiddenStateScenario is casskop/upstream-fix with hidden state across runs
// (a package-level toggle, as a careless reconciler might keep): every other
// world reads the CR once more per reconcile, so the two runs of any
// schedule differ and a determinism check must say so.
func hiddenStateScenario(t testing.TB) *simulator.Scenario {
	sc := lookup(t, "casskop/upstream-fix")
	inner := sc.Controllers[0].NewWithEnv
	var last *simulator.World
	odd := false
	sc.Controllers[0].NewWithEnv = func(env *simulator.Env) reconcile.Reconciler {
		if env.World != last {
			last, odd = env.World, !odd
		}
		r := inner(env)
		if odd {
			return r
		}
		return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			_ = env.Client.Get(ctx, req.NamespacedName, &casskop.CassandraCluster{})
			return r.Reconcile(ctx, req)
		})
	}
	return sc
}

// decide is a step decision among n ordinary options.
func decide(n int) model.Decision {
	return model.Decision{Kind: model.ChooseStep, Options: make([]model.Option, n)}
}
