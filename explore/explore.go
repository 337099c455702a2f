package explore

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// DefaultSchedules is the schedule budget of the sampling strategies
// (random, pct, uniform) when Options.Schedules is 0.
const DefaultSchedules = 2000

// DefaultMaxRuns is the schedule budget of the exhaustive strategy when
// Options.Schedules is 0. A search that does not finish within it is
// inconclusive.
const DefaultMaxRuns = 100000

// DefaultStrategy is the strategy of the zero Options, of DefaultOptions,
// of Check and of `explore check` without -strategy: the exhaustive search
// of the scenario's bounded space (see Exhaustive in docs/explore.md). The
// spaces that have no bound (the inputs of Fuzz, the workloads of
// CheckWorkloads) are sampled at random instead.
const DefaultStrategy = StrategyExhaustive

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

// The budgets that can end an exhaustive search short (Report.Cut).
const (
	CutSchedules = "schedules"
	CutTime      = "time"
)

// Options tune one exploration, whatever the strategy. The zero value is
// the default exploration except for StopAtFirst (false: a sampling
// strategy keeps going after a violation); DefaultOptions sets it.
type Options struct {
	// Strategy is StrategyExhaustive (the default: "" means
	// DefaultStrategy), StrategyRandom, StrategyPCT or StrategyUniform.
	Strategy string
	// Schedules is the schedule budget: schedule indices
	// 0..Schedules-1 for the sampling strategies (default
	// DefaultSchedules), schedules started for the exhaustive search
	// (default DefaultMaxRuns). With sharding, each shard runs its share.
	Schedules int
	// Time, when positive, bounds the exploration's wall time: it changes
	// how far the search gets (the verdict is then inconclusive), never
	// which schedule comes next.
	Time time.Duration
	// Seed (sampling strategies): schedule i runs with seed Seed+i, so any
	// schedule is reproduced by Seed=Seed+i, Schedules=1. The exhaustive
	// search draws nothing and ignores it.
	Seed uint64
	// Faults overrides the scenario's fault budget when non-nil.
	Faults *model.FaultBudget
	// Shard, Shards split the exploration (Shards 0 means 1). Sampling
	// strategies: schedule i belongs to shard i % Shards. Exhaustive: the
	// schedule without faults opens one item per first fault, and the k-th
	// (with its whole subtree) belongs to shard k % Shards.
	Shard, Shards int
	// Workers is the number of goroutines that run schedules (0 means
	// runtime.GOMAXPROCS(0)). The sampling strategies hand out schedule
	// indices and account for the results in index order; the exhaustive
	// search shares its frontier and visited states between workers (see
	// exhaustSearch). The verdict, the violation reported, its choices and
	// history, and so the trace written, are the same for every number of
	// workers; with a Schedules or Time bound that cuts the exhaustive
	// search short, how far it got is not.
	Workers int
	// StopAtFirst stops a sampling strategy at the first violating
	// schedule. The exhaustive search always stops at its first violation
	// (the smallest number of faults comes first).
	StopAtFirst bool
	// CheckDeterminism runs every schedule twice (the exhaustive search
	// replays its recorded choices) and compares the histories; a
	// difference is verdict error ("not deterministic"), naming the first
	// line that differs.
	CheckDeterminism bool
	// NoPrune turns off the exhaustive search's state pruning (to measure
	// what it saves).
	NoPrune bool
	// NoReduce turns off the exhaustive search's partial-order reduction
	// (explore/reduction.go): every enabled fault is offered at every
	// decision, within the fault budget. The full search finds every
	// violation the reduced one finds and is much larger; it is there to
	// check the reduction against.
	NoReduce bool
	// NoResume makes the exhaustive search replay every schedule from the
	// start instead of resuming it from a checkpoint of the schedule that
	// opened it (simulator.World.Checkpoint). The search is the same
	// either way, schedule for schedule (TestResumeExploresTheSameSchedules);
	// this is there to measure what resuming saves and to check it.
	NoResume bool
	// Progress, when set, is called after every schedule (the CLI's live
	// progress line).
	Progress func(Progress)
	// keepGoing (tests) runs the exhaustive search to the end of its
	// bounds instead of stopping at the first violation (each schedule
	// still stops at its own first one); the report keeps the first. The
	// pruning soundness test compares every violation met this way.
	keepGoing bool
	// offerStranding (tests) offers the crashes the reduction leaves out
	// because they strand a pause nothing saw (reduction.go: strands), to
	// check that reduction against the search without it.
	offerStranding bool
	// ignoreTicks (tests) drops the tick mark from the crash and eviction
	// rules (reduction.go: stepMarks.clockMoved): neither fault is then
	// offered again after a tick of the clock alone. That is a bound, not a
	// proof (it misses crash points: TestFinalStateAudit), and a much
	// smaller search. Tests that compare a search with and without some
	// other cut (pruning, the stranding rule) on large bounds use it: both
	// sides run the same coarser reduction, so the comparison still
	// checks that cut, in a fraction of the time.
	ignoreTicks bool
	// perLevel (tests) runs the exhaustive search as iterative deepening
	// on the number of faults: a search per fault count L = 0, 1, ...,
	// each over the schedules with at most L faults (re-running the lower
	// counts' schedules) with a visited table of its own, until one finds
	// a violation. It is the oracle the one search (exhaustSearch) is
	// checked against: the same verdict and first violation.
	perLevel bool
	// trustDepth (tests) skips the check that merges at different depths
	// kept every future (boundsHeld), to show what the check is for.
	trustDepth bool
	// perturb (tests), when set, is called by a worker before it runs a
	// schedule (with the exhaustive item's prefix, or the sampling index):
	// a test delays workers to make them finish out of order.
	perturb func(key []int)
	// Visit, when set, is called after every schedule this shard runs,
	// with the schedule's index (for the exhaustive search: the number of
	// schedules started before it), its seed (0 for the exhaustive search)
	// and its result; res.Choices are its choices. Without Visit the
	// explorer recycles the arrays of every result it does not report
	// (simulator.Result.Release); with it, none: Visit may keep res.
	Visit func(index int, seed uint64, res *simulator.Result)
}

// DefaultOptions are the options of Check and of `explore check` without
// flags: the default strategy and budget, stop at the first violation.
func DefaultOptions() Options {
	return Options{Strategy: DefaultStrategy, StopAtFirst: true}
}

// Option changes Options; Check takes them.
type Option func(*Options)

// WithStrategy sets Options.Strategy.
func WithStrategy(s string) Option { return func(o *Options) { o.Strategy = s } }

// WithSchedules sets Options.Schedules.
func WithSchedules(n int) Option { return func(o *Options) { o.Schedules = n } }

// WithSeed sets Options.Seed.
func WithSeed(seed uint64) Option { return func(o *Options) { o.Seed = seed } }

// WithTime sets Options.Time.
func WithTime(d time.Duration) Option { return func(o *Options) { o.Time = d } }

// WithFaults sets Options.Faults.
func WithFaults(b model.FaultBudget) Option { return func(o *Options) { o.Faults = &b } }

// WithShard sets Options.Shard and Options.Shards.
func WithShard(shard, shards int) Option {
	return func(o *Options) { o.Shard, o.Shards = shard, shards }
}

// WithWorkers sets Options.Workers: how many goroutines run schedules.
func WithWorkers(n int) Option { return func(o *Options) { o.Workers = n } }

// WithDeterminismCheck sets Options.CheckDeterminism.
func WithDeterminismCheck() Option { return func(o *Options) { o.CheckDeterminism = true } }

// Report is the outcome of one exploration of one scenario, whatever the
// strategy.
type Report struct {
	Scenario string
	Strategy string
	// Verdict is VerdictViolation, VerdictVerified (exhaustive only),
	// VerdictInconclusive or VerdictError.
	Verdict string
	// Err is the harness error behind VerdictError.
	Err error
	// Violation is the first violation found (of the lowest violating
	// schedule index this shard ran); nil otherwise.
	Violation *properties.Violation
	// Index and Seed identify the violating schedule. Sampling
	// strategies: rerun with Seed=Seed, Schedules=1 to reproduce it.
	// Exhaustive: Index is the number of schedules started before it and
	// Seed is 0; replay its Choices (Replay, or the trace).
	Index int
	Seed  uint64
	// Choices and History are those of the violating schedule.
	Choices []model.Choice
	History *model.History
	// Faults is the fault budget the schedules ran with.
	Faults model.FaultBudget
	// Shard, Shards: the part of the exploration this report covers
	// (Shards >= 1).
	Shard, Shards int
	// Schedules is how many schedules this shard ran (a determinism check
	// counts once); Violating how many of them broke a property.
	Schedules int
	Violating int
	// Pruned (exhaustive) counts schedules cut short at a state already
	// explored; Skipped the schedule without faults in every shard but
	// shard 0, which runs it only to learn its first faults. Both are
	// included in Schedules.
	Pruned  int
	Skipped int
	// Reexplored (exhaustive) is 1 when the search ran a second time,
	// merging only states reached at the same depth, because
	// a merge of a state reached at different depths could have hidden an
	// effect of the step bound (docs/explore.md, "State pruning").
	Reexplored int
	// Complete (exhaustive): every schedule within the bounds was
	// explored or pruned as a state already explored.
	Complete bool
	// FaultsExplored (exhaustive): every schedule with at most this many
	// faults ran (or was pruned at a state a smaller path explored) and
	// broke no property; -1 when not even the schedule without faults is
	// known to. Verified: the fault budget's total. A violation: one
	// fewer than its faults (the search meets schedules fewest faults
	// first). Inconclusive: what the search covered before its budget ran
	// out, a guarantee short of the verdict (Coverage says it in words).
	FaultsExplored int
	// Cut (exhaustive) names the budget that ended an inconclusive
	// search: CutSchedules (Options.Schedules) or CutTime (Options.Time).
	Cut string
	// violationFaults is the number of faults the violation reported
	// takes (exhaustive).
	violationFaults int
	// Steps is the total number of steps over every schedule run.
	Steps int
	// Replayed (exhaustive) is the part of Steps the search spent
	// replaying the prefixes of its items: each schedule re-runs the
	// steps its parent ran before the decision where it takes its last
	// fault, from the start or, when it could be taken, from the parent's
	// last checkpoint before that decision. A world cannot be copied while
	// a reconcile is in flight (its goroutine's stack), nor when a
	// controller or an external system keeps state the checkpoint cannot
	// see, so some steps are still re-run.
	Replayed int
	// Resumed (exhaustive) is the part of Steps the search did not run
	// because a schedule resumed from a checkpoint: Steps - Replayed -
	// Resumed steps were new.
	Resumed int
	// MonitorReplayed (exhaustive) counts the events that schedules
	// resumed from checkpoints showed fresh property monitors again,
	// because a monitor could not be forked (properties.Forker). It is 0
	// when every monitor forks, as the shipped ones do; a user's monitor
	// without Fork is judged correctly, but makes every resumed schedule
	// re-run the monitors over its whole history.
	MonitorReplayed int
	// Reconciles counts the reconciles of the controllers under test the
	// exploration ran (simulator.Result.Reconciles): every schedule's,
	// crashed ones and those of replayed prefixes included, those a
	// schedule resumed past left out. The reconciles are most of what a
	// schedule costs (docs/benchmarks.md), so this is the work the
	// exploration asked of the reconciler.
	Reconciles int
	// States counts distinct states: for the sampling strategies, final
	// world states (simulator.World.EndStateHash; a coverage figure, not a
	// dedup); for the exhaustive search, the states at fault decisions.
	States  int
	Elapsed time.Duration
	// Trace is the path of the violating schedule's trace file, when one
	// was written (Check and the CLI write it).
	Trace string
	// Replay is the command that replays Trace, as printed in the recipe.
	Replay string
	// Workload is set on the report of a generated workload's violation
	// (ExploreWorkloads): the workload, as the trace's workload line
	// records it (see traces.Trace.Workload).
	Workload string
}

// Explore runs up to opts.Schedules schedules of sc with one strategy and
// reports the first violation (or none). Which schedules run depends only on
// the options, never on the wall clock: Elapsed is measured, not acted on.
func Explore(sc *simulator.Scenario, opts Options) Report {
	start := time.Now()
	defer tuneGC()()
	if opts.Strategy == "" {
		opts.Strategy = DefaultStrategy
	}
	if opts.Schedules <= 0 {
		opts.Schedules = DefaultSchedules
		if opts.Strategy == StrategyExhaustive {
			opts.Schedules = DefaultMaxRuns
		}
	}
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	rep := Report{Scenario: sc.Name, Strategy: opts.Strategy, Verdict: VerdictInconclusive, Faults: sc.Faults, Shard: opts.Shard, Shards: opts.Shards, FaultsExplored: -1}
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
		exhaustive(sc, opts, &rep, start)
		rep.Elapsed = time.Since(start)
		return rep
	}
	if _, err := NewChooser(opts.Strategy, 0); err != nil {
		return fail(err)
	}
	states := map[uint64]bool{}
	// Account for the schedules in index order, whichever worker ran
	// them: the first violation is the lowest violating index, and
	// nothing after it counts when StopAtFirst.
	err := sample(sc, opts, start, func(i int, seed uint64, s sampled) bool {
		res := s.res
		rep.Schedules++
		rep.Steps += res.Steps
		rep.Reconciles += res.Reconciles
		if s.endOK {
			states[s.end] = true
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
				return false
			}
		}
		if opts.Visit == nil && rep.History != res.History {
			res.Release() // nothing kept it: its history array serves a later schedule
		}
		return true
	})
	if err != nil {
		return fail(err)
	}
	rep.States = len(states)
	rep.Elapsed = time.Since(start)
	return rep
}

// sample runs the shard's schedules of a sampling strategy on opts.Workers
// goroutines and hands each result to account, in index order, until
// account returns false, the budget or the time is spent, or a schedule
// fails (its error is returned). Workers run at most a few schedules
// ahead of the one accounted next; what they ran past the end is dropped.
func sample(sc *simulator.Scenario, opts Options, start time.Time, account func(i int, seed uint64, s sampled) bool) error {
	type outcome struct {
		pos int
		res sampled
		err error
	}
	total := 0
	if opts.Shard < opts.Schedules {
		total = (opts.Schedules - opts.Shard + opts.Shards - 1) / opts.Shards
	}
	index := func(pos int) int { return opts.Shard + pos*opts.Shards }
	if opts.Workers == 1 {
		return sampleInline(sc, opts, start, total, index, account)
	}
	jobs := make(chan int)
	results := make(chan outcome, opts.Workers)
	for range opts.Workers {
		go func() {
			for pos := range jobs {
				res, err := sampleOne(sc, opts, index(pos))
				results <- outcome{pos, res, err}
			}
		}()
	}
	window := 2 * opts.Workers
	ready := map[int]outcome{}
	issued, next := 0, 0
	done := false
	var failed error
	for next < issued || (!done && issued < total) {
		var send chan int
		if !done && issued < total && issued < next+window {
			if opts.Time > 0 && time.Since(start) > opts.Time {
				done = true
				continue
			}
			send = jobs
		}
		select {
		case send <- issued:
			issued++
		case o := <-results:
			ready[o.pos] = o
		}
		for o, ok := ready[next]; ok; o, ok = ready[next] {
			delete(ready, next)
			next++
			if done {
				continue // ran past the end: dropped
			}
			if o.err != nil {
				failed, done = o.err, true
				continue
			}
			i := index(o.pos)
			if !account(i, opts.Seed+uint64(i), o.res) {
				done = true
			}
		}
	}
	close(jobs)
	return failed
}

// sampled is one schedule of a sampling strategy as its worker hands it
// over: the run, and the fingerprint of the state it ended in (end, when
// endOK), taken by the worker so that the goroutine that accounts for the
// schedules in order, one after another, does not hash every world.
type sampled struct {
	res   *simulator.Result
	end   uint64
	endOK bool
}

// sampleOne runs schedule i of a sampling strategy (twice, and compares,
// with CheckDeterminism).
func sampleOne(sc *simulator.Scenario, opts Options, i int) (sampled, error) {
	seed := opts.Seed + uint64(i)
	if opts.perturb != nil {
		opts.perturb([]int{i})
	}
	res, err := runOne(sc, opts.Strategy, seed, opts.Faults)
	if err != nil {
		return sampled{res: res}, fmt.Errorf("scenario %s, schedule %d (seed %d): %w", sc.Name, i, seed, err)
	}
	if opts.CheckDeterminism {
		again, err2 := runOne(sc, opts.Strategy, seed, opts.Faults)
		switch {
		case err2 != nil:
			return sampled{res: res}, fmt.Errorf("scenario %s, schedule %d (seed %d), second run: %w", sc.Name, i, seed, err2)
		case res.History.Lines() != again.History.Lines():
			return sampled{res: res}, notDeterministic(sc, fmt.Sprintf("schedule %d (seed %d)", i, seed), res.History.Lines(), again.History.Lines())
		default:
			again.Release()
		}
	}
	s := sampled{res: res}
	if res.World != nil {
		s.end, s.endOK = res.World.EndStateHash()
	}
	return s, nil
}

// sampleInline is sample with one worker, on the caller's goroutine: the
// same schedules accounted in the same order, without a goroutine and two
// channel handoffs per schedule (each of which could wake an idle thread).
// The concurrent path may run one schedule past a stop, which it drops;
// this one stops at once.
func sampleInline(sc *simulator.Scenario, opts Options, start time.Time, total int, index func(int) int, account func(i int, seed uint64, s sampled) bool) error {
	for pos := 0; pos < total; pos++ {
		if opts.Time > 0 && time.Since(start) > opts.Time {
			return nil
		}
		i := index(pos)
		res, err := sampleOne(sc, opts, i)
		if err != nil {
			return err
		}
		if !account(i, opts.Seed+uint64(i), res) {
			return nil
		}
	}
	return nil
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

// firstDiffLine names the first line at which the histories a and b of two
// runs differ.
func firstDiffLine(a, b string) string {
	i, x, y, same := traces.Diff(strings.Split(a, "\n"), strings.Split(b, "\n"))
	if same {
		return "histories differ"
	}
	return fmt.Sprintf("line %d: first run %q, second run %q", i+1, x, y)
}

// notDeterministic is the error of a determinism check (Options.
// CheckDeterminism) whose two runs of one schedule, where, gave the
// histories a and b.
func notDeterministic(sc *simulator.Scenario, where, a, b string) error {
	return fmt.Errorf("scenario %s, %s is not deterministic: %s; the same choices must give the same history, so something outside the choice stream leaks in: state kept across runs by the reconciler (package variables), the wall clock, global rand, map order or a goroutine; fix that, or report it as a harness bug if the reconciler has none", sc.Name, where, firstDiffLine(a, b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
