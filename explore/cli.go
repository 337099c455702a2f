package explore

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opcheck/opcheck/simulator"
)

// Main is opcheck's command line for a set of scenarios: the verbs list,
// check, replay, shrink, view and merge, with the exit statuses 0 (no
// violation; replay: it did not reproduce), 1 (a violation; replay: it
// reproduced) and 2 (a usage, input or harness error). cmd/explore is
// Main(targets.All()...); a user's module gets every verb for its own
// scenarios with a main package of one line:
//
//	func main() { explore.Main(myoperator.Scenarios()...) }
//
// Build it (go build -o bin/mycheck ./cmd/mycheck) and run the binary:
// `go run` turns every non-zero status into 1. Main does not return.
func Main(scenarios ...*simulator.Scenario) {
	// The collector's tuning of an exploration (gc.go), for the whole
	// process: replay and shrink run schedules too. An explicit GOGC
	// still wins.
	tuneGC()
	c := &cli{scenarios: scenarios, prog: progName(os.Args[0]), rebuild: mainRebuild()}
	os.Exit(c.run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run is Main in-process: it runs the command line args (without the
// program name) over scenarios, writes to stdout and stderr, and returns
// the exit status.
func Run(args []string, stdout, stderr io.Writer, scenarios ...*simulator.Scenario) int {
	c := &cli{scenarios: scenarios, prog: "explore"}
	return c.run(args, stdout, stderr)
}

// cli is one command line over a set of scenarios.
type cli struct {
	scenarios []*simulator.Scenario
	// prog is how the recipes name this program (a command that runs it,
	// as invoked).
	prog string
	// rebuild, written into the traces check writes, says how to build
	// this program again (see traces.Trace.Rebuild); "" when unknown.
	rebuild string
	// replayTrace, when set, is the command that replays a trace (Check's
	// go test form); by default "PROG replay TRACE".
	replayTrace func(path string) string
	// workload is the generated workload (a trace's workload line) the
	// scenarios were rebuilt for by CheckWorkloads; "" for a program that
	// runs the scenarios' own workloads, which refuses a workload trace.
	workload string
}

// names lists the scenarios' names in order.
func (c *cli) names() []string {
	names := make([]string, len(c.scenarios))
	for i, sc := range c.scenarios {
		names[i] = sc.Name
	}
	return names
}

// lookup returns the scenario named name.
func (c *cli) lookup(name string) (*simulator.Scenario, error) {
	for _, sc := range c.scenarios {
		if sc.Name == name {
			return sc, nil
		}
	}
	if len(c.scenarios) == 0 {
		return nil, fmt.Errorf("unknown scenario %q: this program knows no scenario (pass them to explore.Main)", name)
	}
	return nil, fmt.Errorf("unknown scenario %q: use one of %s (see `%s list`)", name, strings.Join(c.names(), ", "), c.prog)
}

// duplicate names the first scenario name given twice, or "".
func (c *cli) duplicate() string {
	seen := map[string]bool{}
	for _, sc := range c.scenarios {
		if seen[sc.Name] {
			return sc.Name
		}
		seen[sc.Name] = true
	}
	return ""
}

// progName is how a recipe runs this program again: as invoked, unless it
// is a temporary binary of `go run`, which is gone once it exits; then the
// go run command of its main package (whose exit status 2 becomes 1).
func progName(arg0 string) string {
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
			return "go run " + bi.Path
		}
	}
	return arg0
}

// mainRebuild is the Rebuild line of the traces a main package writes:
// "go build PACKAGE".
func mainRebuild() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Path == "" || bi.Path == "command-line-arguments" || strings.HasSuffix(bi.Path, ".test") {
		return ""
	}
	return "go build " + bi.Path
}

// Exit statuses.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
)

const usage = `usage:
  PROG list
  PROG check [flags] SCENARIO...   (flags: PROG check -h)
  PROG replay TRACE
  PROG shrink [-o OUT] TRACE
  PROG view [-o OUT.html] TRACE
  PROG merge [-html OUT.html] RESULT...
exit status: 0 no violation (replay: it did not reproduce), 1 a violation
(replay: it reproduced), 2 a usage, input or harness error
`

// run is the whole command, in-process (tests call it).
func (c *cli) run(args []string, stdout, stderr io.Writer) int {
	usage := strings.ReplaceAll(usage, "PROG", filepath.Base(c.prog))
	if name := c.duplicate(); name != "" {
		fmt.Fprintf(stderr, "two scenarios are named %q: give each scenario passed to explore.Main its own name\n", name)
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "explore list takes no arguments, got %q\n", args[1:])
			return exitUsage
		}
		for _, name := range c.names() {
			fmt.Fprintln(stdout, name)
		}
		return exitOK
	case "check":
		return c.check(args[1:], stdout, stderr)
	case "replay":
		return c.replay(args[1:], stdout, stderr)
	case "shrink":
		return c.shrink(args[1:], stdout, stderr)
	case "view":
		return c.view(args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
	return exitUsage
}

func (c *cli) check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	strategy := fs.String("strategy", DefaultStrategy, "exhaustive, random, pct or uniform")
	schedules := fs.Int("schedules", 0, "schedule budget per scenario (default: "+strconv.Itoa(DefaultMaxRuns)+" for exhaustive; "+strconv.Itoa(DefaultSchedules)+" for random, pct and uniform)")
	budget := fs.Duration("time", 0, "wall-time budget per scenario, e.g. 30s (0: none); the verdict is inconclusive if it runs out")
	seed := fs.Uint64("seed", 0, "schedule i runs with seed SEED+i")
	crashes := fs.Int("crashes", 0, "crash-restart budget (default: the scenario's)")
	stale := fs.Int("stale", 0, "paused watch cache budget (default: the scenario's)")
	drops := fs.Int("drops", 0, "dropped watch event budget (default: the scenario's)")
	evictions := fs.Int("evictions", 0, "pod eviction budget (default: the scenario's)")
	expiries := fs.Int("expiries", 0, "watch expiry (410 Gone, relist) budget (default: the scenario's)")
	out := fs.String("out", "opcheck-out", "directory for the trace files of violations")
	jsonOut := fs.Bool("json", false, "print one JSON object per scenario on stdout instead of the table")
	shard := fs.String("shard", "0/1", "run shard I of N: the schedules i with i % N == I")
	determinism := fs.Bool("check-determinism", false, "run every schedule twice and compare the histories")
	noPrune := fs.Bool("no-prune", false, "exhaustive: do not prune states already explored (to measure what pruning saves)")
	noReduce := fs.Bool("no-reduce", false, "exhaustive: offer every fault at every decision, without the partial-order reduction (much larger; to check the reduction)")
	noResume := fs.Bool("no-resume", false, "exhaustive: replay every schedule from the start instead of resuming it from a checkpoint (the same search, slower; to measure what resuming saves)")
	workers := fs.Int("workers", 0, "goroutines running schedules (default: GOMAXPROCS); the verdict and the violation reported do not depend on it")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: explore check [flags] SCENARIO...\n(scenarios: explore list)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // the flag package printed what is wrong and the usage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "explore check: "+format+"\n", a...)
		return exitUsage
	}
	if *strategy != StrategyExhaustive {
		if _, err := NewChooser(*strategy, 0); err != nil {
			return usageErr("-strategy: %v", err)
		}
	}
	if *schedules < 0 {
		return usageErr("-schedules %d: want at least 1 (or 0 for the strategy's default)", *schedules)
	}
	if *budget < 0 {
		return usageErr("-time %s: want a duration >= 0", *budget)
	}
	if *workers < 0 {
		return usageErr("-workers %d: want at least 1 (or 0 for GOMAXPROCS)", *workers)
	}
	shardI, shardN, err := parseShard(*shard)
	if err != nil {
		return usageErr("%v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []struct {
		name string
		v    int
	}{{"crashes", *crashes}, {"stale", *stale}, {"drops", *drops}, {"evictions", *evictions}, {"expiries", *expiries}} {
		if set[f.name] && f.v < 0 {
			return usageErr("-%s %d: want a budget >= 0", f.name, f.v)
		}
	}
	if fs.NArg() == 0 {
		return usageErr("no scenario given; pass one or more of: %s", strings.Join(c.names(), " "))
	}
	var scs []*simulator.Scenario
	for _, name := range fs.Args() {
		sc, err := c.lookup(name)
		if err != nil && strings.HasPrefix(name, "-") {
			// Go's flag parsing stops at the first argument that is not
			// a flag, so a flag after a scenario name reads as a name.
			return usageErr("%s comes after a scenario name, where it is read as one: put every flag before the scenario names (%s check [flags] SCENARIO...)", name, c.prog)
		}
		if err != nil {
			return usageErr("%v", err)
		}
		scs = append(scs, sc)
	}
	if err := writableDir(*out); err != nil {
		return usageErr("-out %q is not a writable directory (%v); pass -out with a directory you can write", *out, err)
	}

	var faultFlags []string
	for _, name := range []string{"crashes", "stale", "drops", "evictions", "expiries"} {
		if set[name] {
			faultFlags = append(faultFlags, "-"+name+" "+fs.Lookup(name).Value.String())
		}
	}

	status := exitOK
	var reports []Report
	for _, sc := range scs {
		opts := DefaultOptions()
		opts.Strategy, opts.Schedules, opts.Seed, opts.Time = *strategy, *schedules, *seed, *budget
		opts.Shard, opts.Shards, opts.CheckDeterminism, opts.NoPrune, opts.NoReduce, opts.NoResume = shardI, shardN, *determinism, *noPrune, *noReduce, *noResume
		opts.Workers = *workers
		if len(faultFlags) > 0 {
			b := sc.Faults
			if set["crashes"] {
				b.Crashes = *crashes
			}
			if set["stale"] {
				b.Stale = *stale
			}
			if set["drops"] {
				b.Drops = *drops
			}
			if set["evictions"] {
				b.Evictions = *evictions
			}
			if set["expiries"] {
				b.Expiries = *expiries
			}
			opts.Faults = &b
		}
		if isTerminal(stderr) {
			opts.Progress = progressLine(stderr, sc.Name)
		}
		rep := Explore(sc, opts)
		if opts.Progress != nil {
			fmt.Fprint(stderr, "\r\033[K")
		}
		switch rep.Verdict {
		case VerdictError:
			status = exitUsage
		case VerdictViolation:
			path, err := writeTrace(*out, rep, c.rebuild)
			if err != nil {
				fmt.Fprintf(stderr, "explore check: cannot write the trace of %s to %s: %v; pass a writable -out\n", rep.Scenario, *out, err)
				status = exitUsage
			}
			rep.Trace = path
			rep.Replay = c.replayCommand(rep, faultFlags)
			if status == exitOK {
				status = exitViolation
			}
		}
		reports = append(reports, rep)
		if *jsonOut {
			b, _ := json.Marshal(rep.Result())
			fmt.Fprintf(stdout, "%s\n", b)
		}
	}

	recipes := stdout
	if *jsonOut {
		recipes = stderr
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCENARIO\tVERDICT\tPROPERTY\tSCHEDULES\tTIME\tTRACE")
		for _, rep := range reports {
			prop := "-"
			if rep.Violation != nil {
				prop = rep.Violation.Property
			}
			trace := rep.Trace
			if trace == "" {
				trace = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", rep.Scenario, rep.Verdict, prop, rep.Schedules, rep.Elapsed.Round(time.Millisecond), trace)
		}
		tw.Flush()
	}
	for _, rep := range reports {
		switch {
		case rep.Err != nil:
			fmt.Fprintf(stderr, "\n%s: error: %v\n", rep.Scenario, rep.Err)
		case rep.Verdict == VerdictInconclusive && rep.Coverage() != "":
			fmt.Fprintf(recipes, "\n%s: inconclusive: %s\n  to go on: raise -schedules or -time, or split the search into shards (-shard I/N, then explore merge)\n", rep.Scenario, rep.Coverage())
		case rep.Violation != nil:
			v := rep.Violation
			fmt.Fprintf(recipes, "\n%s: %s violated at step %d\n", rep.Scenario, v.Property, v.Step)
			fmt.Fprintf(recipes, "  %s\n", strings.ReplaceAll(v.String(), "\n", "\n  "))
			if c := rep.Coverage(); c != "" {
				fmt.Fprintf(recipes, "  %s\n", c)
			}
			if rep.Trace != "" {
				fmt.Fprintf(recipes, "  trace: %s\n", rep.Trace)
			}
			if rep.Replay != "" {
				fmt.Fprintf(recipes, "  replay: %s   (exit 1: it reproduces)\n", rep.Replay)
			}
		}
	}
	return status
}

// parseShard parses "I/N" with 0 <= I < N.
func parseShard(s string) (int, int, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("-shard %q: want I/N with 0 <= I < N, e.g. -shard 0/3", s)
	}
	return i, n, nil
}

// writableDir creates dir if needed and proves a file can be created in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// isTerminal reports whether w is a terminal: the live progress line is for
// people, plain summaries for logs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressLine returns a Progress callback that redraws one status line at
// most five times a second. The wall clock here only paces the display; it
// never decides what is explored.
func progressLine(w io.Writer, scenario string) func(Progress) {
	start := time.Now()
	var last time.Time
	return func(p Progress) {
		now := time.Now()
		if now.Sub(last) < 200*time.Millisecond {
			return
		}
		last = now
		rate := float64(p.Schedules) / now.Sub(start).Seconds()
		line := fmt.Sprintf("%s: %d schedules, %d states, %.0f/s, %d violations", scenario, p.Schedules, p.States, rate, p.Violations)
		if p.Covered >= 0 {
			line += fmt.Sprintf(", ~%.0f%% of the bounded space", 100*p.Covered)
		}
		fmt.Fprint(w, "\r\033[K"+line)
	}
}
