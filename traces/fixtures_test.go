package traces_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/traces"
)

// rewrite regenerates the fixtures: go test ./traces/ -run TestFixtures -rewrite
var rewrite = flag.Bool("rewrite", false, "regenerate traces/testdata/*.trace from a fresh exploration and shrink (see docs/traces.md)")

// fixture says how a regression trace in testdata is made: the first
// schedule of Strategy from Seed on (at most Schedules) whose first
// violation is Property (a prefix of the property name), shrunk with at
// most ShrinkRuns replays.
type fixture struct {
	File       string
	Scenario   string
	Strategy   string
	Seed       uint64
	Schedules  int
	Property   string
	ShrinkRuns int
	// Extra fixtures are regenerated with -rewrite only.
	Extra bool
}

var fixtures = []fixture{
	// The seed bugs of docs/case-studies.md. zookeeper_buggy starts at
	// seed 376: the first violating schedule (seed 375) reaches the bug
	// after a long detour that the viewer's browser test cannot frame on
	// one screen; the one from seed 653 is the classic crash, restart on
	// the paused cache, stale read, delete.
	{File: "zookeeper_buggy.trace", Scenario: "zookeeper/buggy", Strategy: explore.StrategyRandom, Seed: 376, Schedules: 2000, Property: "NoDeleteOfLive", ShrinkRuns: 1000},
	{File: "casskop_buggy.trace", Scenario: "casskop/buggy", Strategy: explore.StrategyRandom, Schedules: 2000, Property: "EventuallyConverges", ShrinkRuns: 1000},
	// What the upstream fixes leave: zookeeper's orphan-PVC cleanup still
	// deletes a live member's PVC from a stale read; casskop crashed
	// between its Finalizing write and the StatefulSet update never
	// converges.
	{File: "zookeeper_upstream-fix.trace", Scenario: "zookeeper/upstream-fix", Strategy: explore.StrategyRandom, Schedules: 2000, Property: "NoDeleteOfLive", ShrinkRuns: 1000, Extra: true},
	{File: "casskop_upstream-fix.trace", Scenario: "casskop/upstream-fix", Strategy: explore.StrategyPCT, Schedules: 2000, Property: "EventuallyConverges", ShrinkRuns: 400, Extra: true},
}

// defaultTestShrinkRuns bounds the shrink of TestFixturesRegenerate
// without -rewrite.
const defaultTestShrinkRuns = 150

// replay runs sc with a trace's budget and choices, as `explore replay`
// does, and returns the run as a trace.
func replay(t testing.TB, sc *simulator.Scenario, faults model.FaultBudget, choices []model.Choice) (*simulator.Result, *traces.Trace) {
	t.Helper()
	res, err := simulator.Run(sc, &model.Sequence{Choices: choices}, simulator.RunOptions{Faults: &faults})
	if err != nil {
		t.Fatalf("replaying %s: %v", sc.Name, err)
	}
	var v *properties.Violation
	if len(res.Violations) > 0 {
		v = &res.Violations[0]
	}
	return res, traces.FromRun(sc.Name, faults, res.Choices, res.History, v)
}

// TestFixturesRegenerate explores and shrinks every fixture from scratch
// (in a temporary directory, or into testdata with -rewrite). It is the
// acceptance test of shrinking: the shrunk trace still breaks the same
// property and is smaller.
func TestFixturesRegenerate(t *testing.T) {
	if testing.Short() && !*rewrite {
		t.Skip("explores and shrinks every fixture (about a minute); not with -short")
	}
	dir := t.TempDir()
	if *rewrite {
		dir = "testdata"
	}
	for _, f := range fixtures {
		if !*rewrite {
			// Without -rewrite, a bounded shrink of the seed bugs only
			// (the full one takes minutes on a loaded machine).
			if f.Extra {
				continue
			}
			f.ShrinkRuns = min(f.ShrinkRuns, defaultTestShrinkRuns)
		}
		t.Run(f.File, func(t *testing.T) {
			t.Parallel()
			sc, err := targets.Lookup(f.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var found *simulator.Result
			var seed uint64
			for i := 0; i < f.Schedules && found == nil; i++ {
				seed = f.Seed + uint64(i)
				res, err := explore.RunSchedule(sc, f.Strategy, seed, nil)
				if err != nil {
					t.Fatalf("schedule %d: %v", i, err)
				}
				if len(res.Violations) > 0 && strings.HasPrefix(res.Violations[0].Property, f.Property) {
					found = res
				}
			}
			if found == nil {
				t.Fatalf("no %s schedule of %s seeds %d..%d breaks %s first", f.Strategy, f.Scenario, f.Seed, f.Seed+uint64(f.Schedules)-1, f.Property)
			}
			explored := time.Since(start)
			orig := traces.FromRun(sc.Name, sc.Faults, found.Choices, found.History, &found.Violations[0])
			property := orig.Violation.Property
			start = time.Now()
			shrunk, stats := traces.ShrinkN(orig, func(cs []model.Choice) (*traces.Trace, bool) {
				_, got := replay(t, sc, sc.Faults, cs)
				return got, got.Violation != nil && got.Violation.Property == property
			}, f.ShrinkRuns)
			took := time.Since(start)
			t.Logf("%s: %s seed %d found in %s; shrunk in %d replays, %s: events %d -> %d (%.1fx), choices %d -> %d",
				f.Scenario, f.Strategy, seed, explored.Round(time.Millisecond), stats.Runs, took.Round(time.Millisecond),
				stats.BeforeEvents, stats.AfterEvents, float64(stats.BeforeEvents)/float64(stats.AfterEvents), stats.BeforeChoices, stats.AfterChoices)

			if shrunk.Violation == nil || shrunk.Violation.Property != property {
				t.Fatalf("the shrunk trace breaks %v, want %s", shrunk.Violation, property)
			}
			if !(stats.AfterEvents < stats.BeforeEvents || (stats.AfterEvents == stats.BeforeEvents && stats.AfterChoices < stats.BeforeChoices)) {
				t.Errorf("shrinking found nothing smaller: events %d -> %d, choices %d -> %d", stats.BeforeEvents, stats.AfterEvents, stats.BeforeChoices, stats.AfterChoices)
			}
			// The shrunk trace is a recipe on its own.
			_, again := replay(t, sc, shrunk.Faults, shrunk.Choices)
			if k, w, g, same := traces.Diff(shrunk.Events, again.Events); !same {
				t.Errorf("the shrunk trace does not replay: event %d: want %q got %q", k+1, w, g)
			}
			path := filepath.Join(dir, f.File)
			if err := traces.WriteFile(path, shrunk); err != nil {
				t.Fatal(err)
			}
			if !*rewrite {
				fresh, _ := os.ReadFile(path)
				committed, err := os.ReadFile(filepath.Join("testdata", f.File))
				if err == nil && !bytes.Equal(fresh, committed) {
					t.Logf("testdata/%s differs from a fresh exploration and shrink; if the change is understood, regenerate with go test ./traces/ -run TestFixtures -rewrite", f.File)
				}
			}
		})
	}
}

// fixtureFiles lists testdata/*.trace, and fails when a seed-bug fixture
// is missing.
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.trace"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[filepath.Base(f)] = true
	}
	for _, f := range fixtures {
		if !have[f.File] {
			t.Errorf("testdata/%s is missing; regenerate it with go test ./traces/ -run TestFixtures -rewrite", f.File)
		}
	}
	return files
}

// TestFixturesReproduce replays every trace in testdata: the events must
// come out line for line, and the recorded violation must reproduce.
func TestFixturesReproduce(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := traces.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want.Violation == nil {
				t.Fatalf("%s records no violation; a regression fixture must", path)
			}
			sc, err := targets.Lookup(want.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, got := replay(t, sc, want.Faults, want.Choices)
			t.Logf("%s: %d events replayed in %s", want.Scenario, len(got.Events), time.Since(start).Round(time.Millisecond))
			if got.Violation == nil || got.Violation.Property != want.Violation.Property {
				t.Errorf("%s no longer breaks %s (replay: %v)", path, want.Violation.Property, got.Violation)
			} else if got.Violation.Step != want.Violation.Step {
				t.Errorf("%s breaks %s at step %d, recorded at step %d", path, want.Violation.Property, got.Violation.Step, want.Violation.Step)
			}
			if k, w, g, same := traces.Diff(want.Events, got.Events); !same {
				t.Errorf("%s diverged at event %d:\nwant %s\ngot  %s\nthe simulator or the scenario changed; if that is intended, regenerate with go test ./traces/ -run TestFixtures -rewrite and review the diff", path, k+1, w, g)
			}
		})
	}
}

// TestFixturesRoundTrip: each fixture is in the writer's canonical form,
// so parse then write gives its bytes back.
func TestFixturesRoundTrip(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := traces.Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := traces.Write(&out, tr); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), b) {
				t.Errorf("write(parse(%s)) differs from the file (%d bytes, file %d)", path, out.Len(), len(b))
			}
			tr2, err := traces.Parse(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var out2 bytes.Buffer
			if err := traces.Write(&out2, tr2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out2.Bytes(), b) {
				t.Errorf("a second write(parse(...)) of %s differs", path)
			}
		})
	}
}
