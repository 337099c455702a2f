package explore

import (
	"fmt"
	"strings"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// DefaultSchedules is the schedule budget when Options.Schedules is 0.
const DefaultSchedules = 2000

// Verdicts.
const (
	// VerdictViolation: a schedule broke a property; Report.Violation
	// holds it.
	VerdictViolation = "violation"
	// VerdictVerified: the exhaustive strategy explored the whole bounded
	// space (see Exhaustive for the bounds) and no schedule broke a
	// property.
	VerdictVerified = "verified"
	// VerdictInconclusive: no schedule of the budget broke a property, but
	// the space was not covered: random and PCT sample it, and an
	// exhaustive search that ran out of budget stops short.
	VerdictInconclusive = "inconclusive"
	// VerdictError: the harness failed (a broken scenario, a determinism
	// failure); Report.Err says what.
	VerdictError = "error"
)

// Options tune one exploration. Start from DefaultOptions: the zero value
// of StopAtFirst is false (keep going).
type Options struct {
	// Strategy is "exhaustive", "random" (the default of the zero value),
	// "pct" or "uniform".
	Strategy string
	// Time, when positive, bounds the exploration's wall time: it changes
	// how far the search gets, never which schedule comes next.
	Time time.Duration
	// Schedules is the budget of schedule indices, 0..Schedules-1
	// (default DefaultSchedules). With sharding, each shard runs its share.
	Schedules int
	// Seed: schedule i runs with seed Seed+i, so any schedule is
	// reproduced by Seed=Seed+i, Schedules=1.
	Seed uint64
	// Faults overrides the scenario's fault budget when non-nil.
	Faults *model.FaultBudget
	// Shard, Shards: schedule i belongs to shard i % Shards (Shards 0
	// means 1).
	Shard, Shards int
	// StopAtFirst stops at the first violating schedule.
	StopAtFirst bool
	// CheckDeterminism runs every schedule twice and compares the
	// histories; a difference is an internal error.
	CheckDeterminism bool
	// NoPrune turns off the exhaustive search's state pruning (to measure
	// what it saves).
	NoPrune bool
	// Progress, when set, is called after every schedule (the CLI's live
	// progress line).
	Progress func(Progress)
	// Visit, when set, is called after every schedule this shard runs,
	// with the schedule's index, seed and result (tests, progress).
	Visit func(index int, seed uint64, res *simulator.Result)
}

// DefaultOptions are the options of `explore check` without flags.
func DefaultOptions() Options {
	return Options{Strategy: StrategyRandom, Schedules: DefaultSchedules, StopAtFirst: true}
}

// Option changes Options; Check takes them.
type Option func(*Options)

// WithStrategy sets Options.Strategy.
func WithStrategy(s string) Option { return func(o *Options) { o.Strategy = s } }

// WithSchedules sets Options.Schedules.
func WithSchedules(n int) Option { return func(o *Options) { o.Schedules = n } }

// WithSeed sets Options.Seed.
func WithSeed(seed uint64) Option { return func(o *Options) { o.Seed = seed } }

// WithFaults sets Options.Faults.
func WithFaults(b model.FaultBudget) Option { return func(o *Options) { o.Faults = &b } }

// WithDeterminismCheck sets Options.CheckDeterminism.
func WithDeterminismCheck() Option { return func(o *Options) { o.CheckDeterminism = true } }

// Report is the outcome of one exploration of one scenario.
type Report struct {
	Scenario string
	Strategy string
	// Verdict is VerdictViolation, VerdictInconclusive or VerdictError.
	Verdict string
	// Err is the harness error behind VerdictError.
	Err error
	// Violation is the first violation found (of the lowest violating
	// schedule index this shard ran); nil otherwise.
	Violation *properties.Violation
	// Index and Seed identify the violating schedule: rerun with
	// Seed=Seed, Schedules=1 to reproduce it.
	Index int
	Seed  uint64
	// Choices and History are those of the violating schedule.
	Choices []model.Choice
	History *model.History
	// Faults is the fault budget the schedules ran with.
	Faults model.FaultBudget
	// Schedules is how many schedules this shard ran (a determinism check
	// counts once); Violating how many of them broke a property.
	Schedules int
	Violating int
	// Steps is the total number of steps over every schedule run.
	Steps int
	// States is the number of distinct final world states
	// (simulator.World.StateHash) over the schedules run: a coverage
	// figure, not a dedup.
	States  int
	Elapsed time.Duration
	// Trace is the path of the violating schedule's trace file; the CLI
	// fills it.
	Trace string
}

// Explore runs up to opts.Schedules schedules of sc with one strategy and
// reports the first violation (or none). Which schedules run depends only on
// the options, never on the wall clock: Elapsed is measured, not acted on.
func Explore(sc *simulator.Scenario, opts Options) Report {
	start := time.Now()
	if opts.Strategy == "" {
		opts.Strategy = StrategyRandom
	}
	if opts.Schedules <= 0 && opts.Strategy != StrategyExhaustive {
		opts.Schedules = DefaultSchedules
	}
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	rep := Report{Scenario: sc.Name, Strategy: opts.Strategy, Verdict: VerdictInconclusive, Faults: sc.Faults}
	if opts.Faults != nil {
		rep.Faults = *opts.Faults
	}
	defer func() { rep.Elapsed = time.Since(start) }()
	fail := func(err error) Report {
		rep.Verdict, rep.Err = VerdictError, err
		rep.Elapsed = time.Since(start)
		return rep
	}
	if opts.Shard < 0 || opts.Shard >= opts.Shards {
		return fail(fmt.Errorf("shard %d/%d: want 0 <= shard < shards", opts.Shard, opts.Shards))
	}
	if opts.Strategy == StrategyExhaustive {
		return exhaustiveReport(sc, opts, rep, start)
	}
	if _, err := NewChooser(opts.Strategy, 0); err != nil {
		return fail(err)
	}
	states := map[uint64]bool{}
	for i := opts.Shard; i < opts.Schedules; i += opts.Shards {
		if opts.Time > 0 && time.Since(start) > opts.Time {
			break
		}
		seed := opts.Seed + uint64(i)
		res, err := runOne(sc, opts.Strategy, seed, opts.Faults)
		if err != nil {
			return fail(fmt.Errorf("scenario %s, schedule %d (seed %d): %w", sc.Name, i, seed, err))
		}
		if opts.CheckDeterminism {
			again, err := runOne(sc, opts.Strategy, seed, opts.Faults)
			if err != nil {
				return fail(fmt.Errorf("scenario %s, schedule %d (seed %d), second run: %w", sc.Name, i, seed, err))
			}
			if a, b := res.History.Lines(), again.History.Lines(); a != b {
				return fail(fmt.Errorf("internal error: scenario %s, schedule %d (seed %d) is not deterministic: %s; the same choices must give the same history, so something outside the choice stream leaks in: state kept across runs by the reconciler (package variables), the wall clock, global rand, map order or a goroutine; fix that, or report it as a harness bug if the reconciler has none", sc.Name, i, seed, firstDiff(a, b)))
			}
		}
		rep.Schedules++
		rep.Steps += res.Steps
		if res.World != nil {
			if h, ok := res.World.StateHash(); ok {
				states[h] = true
			}
		}
		if opts.Visit != nil {
			opts.Visit(i, seed, res)
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Schedules: rep.Schedules, States: len(states), Violations: rep.Violating + boolInt(len(res.Violations) > 0), Covered: -1})
		}
		if len(res.Violations) > 0 {
			rep.Violating++
			if rep.Violation == nil {
				v := res.Violations[0]
				rep.Verdict, rep.Violation = VerdictViolation, &v
				rep.Index, rep.Seed = i, seed
				rep.Choices, rep.History = res.Choices, res.History
			}
			if opts.StopAtFirst {
				break
			}
		}
	}
	rep.States = len(states)
	rep.Elapsed = time.Since(start)
	return rep
}

// RunSchedule runs the one schedule of a strategy with a seed: what
// Explore runs as schedule i with seed Options.Seed+i.
func RunSchedule(sc *simulator.Scenario, strategy string, seed uint64, faults *model.FaultBudget) (*simulator.Result, error) {
	if _, err := NewChooser(strategy, 0); err != nil {
		return nil, err
	}
	return runOne(sc, strategy, seed, faults)
}

func runOne(sc *simulator.Scenario, strategy string, seed uint64, faults *model.FaultBudget) (*simulator.Result, error) {
	ch, err := NewChooser(strategy, seed)
	if err != nil {
		return nil, err
	}
	w, err := simulator.NewWorld(sc, ch, simulator.RunOptions{Faults: faults})
	if err != nil {
		return nil, err
	}
	if b, ok := ch.(binder); ok {
		b.bind(w)
	}
	return w.Run()
}

// Replay runs sc with recorded choices (from a Report or a trace file). It
// fails when the run diverges from the recording: the scenario or the
// controller changed since.
func Replay(sc *simulator.Scenario, choices []model.Choice, faults *model.FaultBudget) (*simulator.Result, error) {
	seq := &model.Sequence{Choices: choices}
	res, err := simulator.Run(sc, seq, simulator.RunOptions{Faults: faults})
	if err != nil {
		return nil, err
	}
	if seq.Diverged {
		return res, fmt.Errorf("replay of %s diverged at choice %d: the recorded choice does not fit the decision the run asked for; the scenario or the controller changed since the recording, so explore again", sc.Name, seq.DivergedAt+1)
	}
	return res, nil
}

// firstDiff describes the first line where two histories differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: first run %q, second run %q", i+1, x, y)
		}
	}
	return "histories differ"
}

// exhaustiveReport runs the exhaustive strategy and reports it like the
// others. Options.Schedules, when set, bounds the runs.
func exhaustiveReport(sc *simulator.Scenario, opts Options, rep Report, start time.Time) Report {
	eo := ExhaustiveOptions{Faults: opts.Faults, MaxRuns: opts.Schedules, Deadline: opts.Time, Shard: opts.Shard, Shards: opts.Shards, CheckDeterminism: opts.CheckDeterminism, Progress: opts.Progress, NoDedup: opts.NoPrune}
	r := Exhaustive(sc, eo)
	rep.Schedules, rep.Steps, rep.States = r.Runs, r.Steps, r.States
	rep.Elapsed = time.Since(start)
	switch {
	case r.Err != nil:
		rep.Verdict, rep.Err = VerdictError, r.Err
	case r.Violation != nil:
		rep.Verdict, rep.Violation, rep.Violating = VerdictViolation, r.Violation, 1
		rep.Choices, rep.History = r.Choices, r.History
	case r.Complete:
		rep.Verdict = VerdictVerified
	default:
		rep.Verdict = VerdictInconclusive
	}
	return rep
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
