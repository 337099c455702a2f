package explore

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
)

// fakeTB records a Fatalf instead of ending the test, and what it logs.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
	logs   []string
}

func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

func TestCheckFailsWithTheRecipe(t *testing.T) {
	// Seed 128 is the casskop/buggy schedule random exploration from seed 1
	// stops at (TestFindsSeedBugs).
	t.Setenv("OPCHECK_OUT", t.TempDir())
	ft := &fakeTB{TB: t}
	rep := Check(ft, lookup(t, "casskop/buggy"), WithStrategy(StrategyRandom), WithSeed(128), WithSchedules(1))
	if !ft.failed {
		t.Fatalf("Check passed a violating schedule; verdict %s", rep.Verdict)
	}
	for _, want := range []string{"casskop/buggy", "EventuallyConverges", "at step", "trace: ", "-opcheck.replay=", "-opcheck.view=", "-opcheck.shrink=", "explore.WithSeed(128)", `explore.WithStrategy("random")`} {
		if !strings.Contains(ft.msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, ft.msg)
		}
	}

	ft = &fakeTB{TB: t}
	Check(ft, lookup(t, "casskop/upstream-fix"), WithStrategy(StrategyRandom), WithSchedules(3))
	if ft.failed {
		t.Errorf("Check failed a clean exploration: %s", ft.msg)
	}
}

// The Go line of a recipe is right for its strategy: the exhaustive
// search's choices replay the violation, and a sampling strategy's seed
// reruns it alone.
func TestRecipeReplaysForEachStrategy(t *testing.T) {
	sc := lookup(t, "casskop/buggy")
	ex := Explore(sc, DefaultOptions())
	if ex.Verdict != VerdictViolation || ex.Strategy != StrategyExhaustive {
		t.Fatalf("default exploration of casskop/buggy: %s with %s, want a violation by the exhaustive search", ex.Verdict, ex.Strategy)
	}
	recipe := Recipe(ex)
	if !strings.Contains(recipe, "the fewest of any violating schedule: every schedule with fewer ran and broke no property") {
		t.Errorf("the exhaustive recipe does not say the violation has the fewest faults:\n%s", recipe)
	}
	if strings.Contains(recipe, "WithSeed") {
		t.Errorf("the exhaustive search has no seed, but its recipe names one:\n%s", recipe)
	}
	m := regexp.MustCompile(`model\.ParseChoices\(("[^"]*")\)`).FindStringSubmatch(recipe)
	if m == nil {
		t.Fatalf("no ParseChoices in the exhaustive recipe:\n%s", recipe)
	}
	quoted, err := strconv.Unquote(m[1])
	if err != nil {
		t.Fatal(err)
	}
	choices, err := model.ParseChoices(quoted)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(sc, choices, &ex.Faults)
	if err != nil || len(res.Violations) == 0 || res.Violations[0].Property != ex.Violation.Property || res.Violations[0].Step != ex.Violation.Step {
		t.Fatalf("the exhaustive recipe's choices replay to %v (err %v), want %s at step %d", res.Violations, err, ex.Violation.Property, ex.Violation.Step)
	}

	rnd := Explore(sc, Options{Strategy: StrategyRandom, Seed: 100, Schedules: 200, StopAtFirst: true})
	if rnd.Verdict != VerdictViolation {
		t.Fatalf("random from seed 100: %s, want a violation", rnd.Verdict)
	}
	m = regexp.MustCompile(`explore\.WithSeed\((\d+)\), explore\.WithSchedules\(1\)`).FindStringSubmatch(Recipe(rnd))
	if m == nil {
		t.Fatalf("no seed in the random recipe:\n%s", Recipe(rnd))
	}
	seed, _ := strconv.ParseUint(m[1], 10, 64)
	t.Setenv("OPCHECK_OUT", t.TempDir())
	ft := &fakeTB{TB: t}
	again := Check(ft, sc, WithStrategy(StrategyRandom), WithSeed(seed), WithSchedules(1), WithFaults(rnd.Faults))
	if !ft.failed || again.Violation == nil || again.Violation.Step != rnd.Violation.Step {
		t.Fatalf("the random recipe's Check did not reproduce %s at step %d: %s", rnd.Violation.Property, rnd.Violation.Step, again.Verdict)
	}
}
