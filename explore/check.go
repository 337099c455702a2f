package explore

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// Check explores sc from a go test, with DefaultOptions changed by opts
// (the exhaustive search of the scenario's bounded space, as `explore
// check` does), and fails t with the violation and the recipe that
// replays it. A harness error fails t as well.
//
//	func TestMyOperator(t *testing.T) {
//		explore.Check(t, myScenario())
//	}
//
// The trace of a violation is written, atomically, to $OPCHECK_OUT when
// set, else to testdata/opcheck/ in the test's package directory (see
// CheckOutDir), named after the scenario. The recipe prints the go test
// command that replays it from the user's module, with the flags Check
// reads in a test binary:
//
//	go test PACKAGE -run '^TestMyOperator$' -v -opcheck.replay=TRACE   replay: fails (exit 1) when the violation reproduces
//	go test PACKAGE -run '^TestMyOperator$' -v -opcheck.view=TRACE     write the HTML viewer next to the trace
//	go test PACKAGE -run '^TestMyOperator$' -v -opcheck.shrink=TRACE   write a shorter trace with the same violation (.min.trace)
//
// With one of these flags, the Check of the trace's scenario does that
// instead of exploring (other Checks of the test are skipped, and a test
// with no Check of the trace's scenario fails). The trace records its go
// test command on its rebuild line, so `explore replay` of another build
// prints it too. A harness error in this mode exits the test binary with
// status 2 (go test itself reports every failing binary as 1).
func Check(t testing.TB, sc *simulator.Scenario, opts ...Option) Report {
	t.Helper()
	if verb, path := traceFlag(); path != "" {
		return checkTrace(t, sc, verb, path, "")
	}
	o := DefaultOptions()
	for _, f := range opts {
		f(&o)
	}
	rep := Explore(sc, o)
	switch rep.Verdict {
	case VerdictError:
		t.Fatalf("explore %s: %v", sc.Name, rep.Err)
	case VerdictViolation:
		rebuild := testRebuild(t.Name())
		dir := CheckOutDir()
		path, err := writeTrace(dir, rep, rebuild)
		if err != nil {
			t.Fatalf("%s\ncannot write its trace to %s: %v; set $OPCHECK_OUT to a writable directory", Recipe(rep), dir, err)
			return rep
		}
		rep.Trace = path
		rep.Replay = testVerb(rebuild, "replay", path)
		t.Fatalf("%s", recipe(rep, []string{
			"view: " + testVerb(rebuild, "view", path),
			"shrink: " + testVerb(rebuild, "shrink", path),
			"(run them anywhere in the module; go test runs the test in its package directory " + packageDir() + ", and the trace path is relative to it)",
		}))
	case VerdictInconclusive:
		// Not a failure (a budget is the user's choice), but never silent:
		// the test passes with less than a verdict.
		if c := rep.Coverage(); c != "" {
			t.Logf("explore %s: inconclusive: %s; to go on, raise the budget (WithSchedules, WithTime)", sc.Name, c)
		} else {
			t.Logf("explore %s: inconclusive: %d %s schedules broke no property", sc.Name, rep.Schedules, rep.Strategy)
		}
	}
	return rep
}

// CheckOutDir is where Check writes the trace of a violation: $OPCHECK_OUT
// when set, else testdata/opcheck (relative to the working directory,
// which go test sets to the test's package directory).
func CheckOutDir() string {
	if d := os.Getenv("OPCHECK_OUT"); d != "" {
		return d
	}
	return filepath.Join("testdata", "opcheck")
}

// The test binary flags Check reads (registered only in test binaries, so
// that a user's main program keeps its flag set).
var traceFlags = map[string]*string{}

func init() {
	if !testing.Testing() {
		return
	}
	for _, f := range []struct{ verb, usage string }{
		{"replay", "opcheck: replay this trace in the explore.Check of its scenario instead of exploring; the test fails when the violation reproduces"},
		{"view", "opcheck: write the HTML viewer of this trace (TRACE.html) in the explore.Check of its scenario instead of exploring"},
		{"shrink", "opcheck: shrink this trace (to TRACE.min.trace) in the explore.Check of its scenario instead of exploring"},
	} {
		traceFlags[f.verb] = flag.String("opcheck."+f.verb, "", f.usage)
	}
}

// traceFlag returns the verb and trace of the -opcheck.* flag set, if any.
func traceFlag() (verb, path string) {
	for _, v := range []string{"replay", "view", "shrink"} {
		if p := traceFlags[v]; p != nil && *p != "" {
			return v, *p
		}
	}
	return "", ""
}

// matched records, per test, whether a Check of the replayed trace's
// scenario ran.
var matched sync.Map // testing.TB -> *atomic.Bool

// checkTrace is Check under -opcheck.replay, -opcheck.view or
// -opcheck.shrink: the CLI verb on the trace, over the one scenario sc.
func checkTrace(t testing.TB, sc *simulator.Scenario, verb, path, workload string) Report {
	t.Helper()
	rep := Report{Scenario: sc.Name, Verdict: VerdictInconclusive, Trace: path, FaultsExplored: -1}
	tr, err := traces.ReadFile(path)
	if err != nil {
		harnessExit(t, fmt.Sprintf("-opcheck.%s: %v (fix the file, or write a fresh trace by running the test without -opcheck.%s)", verb, err, verb))
		return rep
	}
	m, loaded := matched.LoadOrStore(t, new(atomic.Bool))
	hit := m.(*atomic.Bool)
	if !loaded {
		t.Cleanup(func() {
			matched.Delete(t)
			if !hit.Load() {
				what := "explore.Check"
				if tr.Workload != "" {
					what = "explore.CheckWorkloads"
				}
				t.Errorf("-opcheck.%s=%s: no %s of scenario %q ran in %s; run the test its trace names (%s)", verb, path, what, tr.Scenario, t.Name(), tr.Rebuild)
			}
		})
	}
	if tr.Scenario != sc.Name {
		t.Logf("-opcheck.%s: skipped %s: the trace is of %s", verb, sc.Name, tr.Scenario)
		return rep
	}
	if tr.Workload != workload {
		// A generated workload's trace is CheckWorkloads's to run, and
		// CheckWorkloads runs a Check trace as Check does.
		t.Logf("-opcheck.%s: skipped %s: the trace is of a generated workload, which explore.CheckWorkloads runs", verb, sc.Name)
		return rep
	}
	hit.Store(true)
	rebuild := tr.Rebuild
	if rebuild == "" {
		rebuild = testRebuild(t.Name())
	}
	c := &cli{scenarios: []*simulator.Scenario{sc}, prog: "explore", rebuild: rebuild, workload: workload, replayTrace: func(p string) string {
		return testVerb(rebuild, "replay", p)
	}}
	var out, errb strings.Builder
	code := c.run([]string{verb, path}, &out, &errb)
	msg := strings.TrimSpace(out.String() + errb.String())
	switch code {
	case exitViolation:
		rep.Verdict = VerdictViolation
		t.Fatalf("%s", msg)
	case exitOK:
		t.Logf("%s", msg)
	default:
		harnessExit(t, msg)
	}
	return rep
}

// harnessExit reports a harness error of a test run under an -opcheck.*
// flag and ends the test binary with status 2: it is not a finding, and
// the status says so to whoever runs the compiled test binary.
func harnessExit(t testing.TB, msg string) {
	t.Helper()
	fmt.Fprintf(os.Stderr, "--- FAIL: %s\n    opcheck: error: %s\n", t.Name(), msg)
	os.Exit(exitUsage)
}

// testVerb is the go test command that runs verb (replay, view, shrink) on
// the trace at path in the test rebuild names. -v shows what it did when
// the test passes (go test hides a passing test's log otherwise).
func testVerb(rebuild, verb, path string) string {
	return rebuild + " -v -opcheck." + verb + "=" + shellQuote(path)
}

// testRebuild is the go test command that runs the test named name (as
// t.Name() gives it) of the package in the working directory: "go test
// PACKAGE -run PATTERN".
func testRebuild(name string) string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	return "go test " + packagePath() + " -run " + shellQuote(strings.Join(parts, "/"))
}

// packageDir is the working directory: under go test, the test's package
// directory.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

// packagePath is the import path of the package in the working directory,
// from the module path in the nearest go.mod above it; "." when there is
// none.
func packagePath() string {
	dir := packageDir()
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modulePath(data)
			if mod == "" {
				return "."
			}
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "."
			}
			if rel == "." {
				return mod
			}
			return mod + "/" + filepath.ToSlash(rel)
		}
		if filepath.Dir(d) == d {
			return "."
		}
	}
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Recipe is the human report of a violation: the property, the step, the
// explanation, the choices and how to replay the schedule, in a form that
// is right for the report's strategy: a sampling strategy's schedule
// reruns from its seed; the exhaustive search's schedule (it has no seed)
// replays from its choices.
func Recipe(rep Report) string { return recipe(rep, nil) }

// recipe is Recipe with more command lines after the replay line.
func recipe(rep Report, more []string) string {
	if rep.Violation == nil {
		return rep.Scenario + ": no violation"
	}
	var b strings.Builder
	switch rep.Strategy {
	case StrategyExhaustive:
		fmt.Fprintf(&b, "%s: %s violated at step %d (schedule %d of the exhaustive search)\n", rep.Scenario, rep.Violation.Property, rep.Violation.Step, rep.Index)
	case StrategyFuzz:
		fmt.Fprintf(&b, "%s: %s violated at step %d (a fuzz input)\n", rep.Scenario, rep.Violation.Property, rep.Violation.Step)
	default:
		fmt.Fprintf(&b, "%s: %s violated at step %d (schedule %d of strategy %s, seed %d)\n", rep.Scenario, rep.Violation.Property, rep.Violation.Step, rep.Index, rep.Strategy, rep.Seed)
	}
	fmt.Fprintf(&b, "%s\n", rep.Violation.String())
	if c := rep.Coverage(); c != "" {
		fmt.Fprintf(&b, "%s\n", c)
	}
	if rep.Trace != "" {
		fmt.Fprintf(&b, "trace: %s\n", rep.Trace)
	}
	if rep.Replay != "" {
		fmt.Fprintf(&b, "replay: %s   (exit 1: it reproduces)\n", rep.Replay)
	}
	for _, l := range more {
		fmt.Fprintf(&b, "%s\n", l)
	}
	faults := fmt.Sprintf("model.FaultBudget{Crashes: %d, Stale: %d, Drops: %d, Evictions: %d}", rep.Faults.Crashes, rep.Faults.Stale, rep.Faults.Drops, rep.Faults.Evictions)
	switch {
	case rep.Trace != "" && (rep.Strategy == StrategyExhaustive || rep.Strategy == StrategyFuzz):
		// The trace holds the choices; the line stays short.
		fmt.Fprintf(&b, "replay in Go: tr, _ := traces.ReadFile(%q); res, err := explore.Replay(sc, tr.Choices, &tr.Faults)", rep.Trace)
	case rep.Strategy == StrategyExhaustive || rep.Strategy == StrategyFuzz:
		choices := model.FormatChoices(rep.Choices)
		fmt.Fprintf(&b, "choices: %s\n", choices)
		fmt.Fprintf(&b, "replay in Go: choices, _ := model.ParseChoices(%q); res, err := explore.Replay(sc, choices, &%s)", choices, faults)
	default:
		if rep.Trace == "" {
			fmt.Fprintf(&b, "choices: %s\n", model.FormatChoices(rep.Choices))
		}
		fmt.Fprintf(&b, "replay in Go: explore.Check(t, sc, explore.WithStrategy(%q), explore.WithSeed(%d), explore.WithSchedules(1), explore.WithFaults(%s))", rep.Strategy, rep.Seed, faults)
	}
	return b.String()
}

// StrategyFuzz names the reports of Fuzz: a schedule decoded from a
// fuzzer's input (FuzzChooser). It is not an Options.Strategy: go test
// -fuzz drives it.
const StrategyFuzz = "fuzz"

// FuzzSeeds is how many seed-corpus entries Fuzz adds besides the empty
// input.
const FuzzSeeds = 8

// FuzzHeader is the number of leading input bytes FuzzChooser decodes as
// the schedule's parameters: the fault coin's rate and the stream seed.
const FuzzHeader = 9

// FuzzChooser decodes fuzzer bytes into the chooser of one schedule. The
// mapping reuses the random strategy's fault coin, because reading the
// bytes as raw step indices (model.Values) proved weak: a uniform choice
// over all alternatives spends the fault budget in the first steps.
//
//   - data[0] % 8 picks the fault coin's rate: 0 is 1/2, 1 is 1/4, ...,
//     7 is 1/256 (the rates Random draws from).
//   - data[1:9] is a little-endian uint64 seeding the PCG stream that makes
//     every draw not given by the bytes below (as Random's seed does);
//     a shorter input is padded with zeros.
//   - data[9:], when present, steers the ordinary steps: byte j picks the
//     j-th ordinary step, as the index byte % (number of ordinary steps
//     enabled). The coin, the fault picks, the server and data choices still
//     come from the stream, which draws the same numbers whatever these
//     bytes say, so a mutation of byte j changes decision j and what
//     follows from it, not the whole stream.
//
// A step choice tosses the coin: with probability rate it runs one of the
// enabled fault steps (crashes, cache pauses, drops, evictions, settle),
// else an ordinary one (model.Option.Actor tells them apart). Unlike
// Random's, this coin keeps its rate when nothing changes, so that a
// stored fuzz input keeps the schedule it was found with.
func FuzzChooser(data []byte) model.Chooser {
	var hdr [FuzzHeader]byte
	copy(hdr[:], data)
	seed := binary.LittleEndian.Uint64(hdr[1:])
	c := &fuzzChooser{r: newRand(seed)}
	c.coin.rate = faultRates[int(hdr[0])%len(faultRates)]
	if len(data) > FuzzHeader {
		c.picks = data[FuzzHeader:]
	}
	return c
}

// FuzzInput is the fuzz input that FuzzChooser decodes into the fault-coin
// rate faultRates[rate%8] and stream seed seed, with no steering bytes.
func FuzzInput(rate int, seed uint64) []byte {
	b := make([]byte, FuzzHeader)
	b[0] = byte(rate)
	binary.LittleEndian.PutUint64(b[1:], seed)
	return b
}

type fuzzChooser struct {
	r        *rand.Rand
	coin     faultCoin
	picks    []byte
	k        int // ordinary picks made so far
	ord, flt []int
}

func (c *fuzzChooser) Choose(d model.Decision) int {
	n := len(d.Options)
	if d.Kind != model.ChooseStep {
		return c.r.IntN(n)
	}
	ord, flt, ok := c.coin.split(&d, c.ord[:0], c.flt[:0])
	if !ok {
		ord, flt = ord[:0], flt[:0]
		for i := 0; i < n; i++ {
			ord = append(ord, i)
		}
	}
	c.ord, c.flt = ord, flt
	if len(flt) > 0 && (len(ord) == 0 || c.r.Float64() < c.coin.rate) {
		return flt[c.r.IntN(len(flt))]
	}
	i := c.r.IntN(len(ord))
	if c.k < len(c.picks) {
		i = int(c.picks[c.k]) % len(ord)
	}
	c.k++
	return ord[i]
}

// FuzzSchedule runs the schedule of sc that the fuzz input data stands for
// (see FuzzChooser): what the Fuzz target runs for that input.
func FuzzSchedule(sc *simulator.Scenario, data []byte, faults *model.FaultBudget) (*simulator.Result, error) {
	return simulator.Run(sc, FuzzChooser(data), simulator.RunOptions{Faults: faults})
}

// Fuzz is the adapter for `go test -fuzz`: it decodes the fuzzer's bytes
// into a schedule of sc with FuzzChooser (byte 0: the fault coin's rate;
// bytes 1-8: the seed of the random stream; later bytes: the picks among
// the ordinary steps) and fails on a violation, printing the property, the
// choices and how to replay them.
//
// Its seed corpus is the empty input plus FuzzSeeds fixed inputs
// FuzzInput(i, i+1) for i in 0..FuzzSeeds-1 (every coin rate once, no
// steering bytes). Plain `go test` runs only those and the crashers saved
// under testdata/fuzz; `go test -fuzz=FuzzX` mutates them to search. A
// failing input found by -fuzz is written to testdata/fuzz/FuzzX/ and
// replays under `go test -run=FuzzX/<file name>`, or in code with
// FuzzSchedule(sc, input, nil) or Replay(sc, choices, nil).
//
//	func FuzzMyOperator(f *testing.F) { explore.Fuzz(f, myScenario()) }
//
// A violation is reported as Check reports one (the same Report, as the
// strategy StrategyFuzz, and the same recipe): its trace is written to
// CheckOutDir, and the printed go test commands with -opcheck.replay,
// -opcheck.view and -opcheck.shrink work on it, because Fuzz, given one of
// those flags, does that instead of fuzzing.
func Fuzz(f *testing.F, sc *simulator.Scenario) {
	f.Helper()
	if verb, path := traceFlag(); path != "" {
		checkTrace(f, sc, verb, path, "")
		return
	}
	f.Add([]byte{})
	for i := 0; i < FuzzSeeds; i++ {
		f.Add(FuzzInput(i, uint64(i+1)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := FuzzSchedule(sc, data, nil)
		if err != nil {
			t.Fatalf("harness error in %s: %v (fix the scenario; this is not a finding)", sc.Name, err)
		}
		if len(res.Violations) > 0 {
			v := res.Violations[0]
			var hdr [FuzzHeader]byte
			copy(hdr[:], data)
			rep := Report{Scenario: sc.Name, Strategy: StrategyFuzz, Verdict: VerdictViolation, Violation: &v, Choices: res.Choices, History: res.History, Faults: sc.Faults, Shards: 1, Schedules: 1, Violating: 1, Steps: res.Steps, Reconciles: res.Reconciles, FaultsExplored: -1}
			input := fmt.Sprintf("fuzz input: coin rate 1/%d, stream seed %d, %d steering bytes; explore.FuzzSchedule(sc, input, nil) reruns it, and `go test -run=%s/<file>` the input go test saved under testdata/fuzz/%s", int(1/faultRates[int(hdr[0])%len(faultRates)]), binary.LittleEndian.Uint64(hdr[1:]), max(0, len(data)-FuzzHeader), fuzzName(t.Name()), fuzzName(t.Name()))
			rebuild := testRebuild(fuzzName(t.Name()))
			path, err := writeTrace(CheckOutDir(), rep, rebuild)
			if err != nil {
				t.Fatalf("%s\n%s\ncannot write its trace to %s: %v; set $OPCHECK_OUT to a writable directory", Recipe(rep), input, CheckOutDir(), err)
				return
			}
			rep.Trace, rep.Replay = path, testVerb(rebuild, "replay", path)
			t.Fatalf("%s", recipe(rep, []string{
				"view: " + testVerb(rebuild, "view", path),
				"shrink: " + testVerb(rebuild, "shrink", path),
				input,
			}))
		}
	})
}

// fuzzName is the fuzz target's name in a t.Name() like "FuzzX/seed#1".
func fuzzName(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}
