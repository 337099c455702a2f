package explore

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// Action is one kind of user write a generated workload may contain: a
// generator of its parameter and the workload step for a parameter.
//
// A generated workload runs its actions in any order, so Step's Do must
// accept any state the earlier steps leave: an action on an object that
// does not exist yet, or a create of one that exists, is a no-op (return
// nil), as a failed kubectl command would be; only the errors of the
// step's retry policy may fail (simulator.DefaultRetry: Conflict,
// AlreadyExists, NotFound, which the simulator retries). Until should wait
// for what a user waits for after the command (the cluster settling on the
// new spec); when it does not hold within the step's Timeout
// (simulator.DefaultWaitTimeout by default), the run reports the finding
// simulator.WorkloadStuck.
type Action struct {
	Name string
	// Gen generates the parameter; its shrinker and sieve, if any, shrink
	// it within its range. Its shrinker and sieve must not depend on the
	// value generated (true of gopter's gen.IntRange, gen.OneConstOf, ...).
	Gen gopter.Gen
	// Step builds the workload step for one parameter from Gen.
	Step func(param any) simulator.WorkloadStep
}

// Call is one step of a generated workload: an action's name and its
// parameter.
type Call struct {
	Action string
	Param  any
}

func (c Call) String() string { return fmt.Sprintf("%s(%v)", c.Action, c.Param) }

// GoString renders the call as a Go literal, for replay recipes.
func (c Call) GoString() string {
	var p string
	switch c.Param.(type) {
	case int, string, bool, nil:
		p = fmt.Sprintf("%#v", c.Param)
	default:
		p = fmt.Sprintf("%T(%#v)", c.Param, c.Param)
	}
	return fmt.Sprintf("{Action: %q, Param: %s}", c.Action, p)
}

// FormatCalls renders a workload as "[create(2) scale(1)]".
func FormatCalls(calls []Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// GoCalls renders a workload as a Go []explore.Call literal.
func GoCalls(calls []Call) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.GoString()
	}
	return "[]explore.Call{" + strings.Join(parts, ", ") + "}"
}

// WorkloadScenario returns a copy of base whose Workload is calls, each
// built by the action of its name. Everything else (objects, controllers,
// faults, properties) is base's.
func WorkloadScenario(base *simulator.Scenario, actions []Action, calls []Call) (*simulator.Scenario, error) {
	byName := map[string]*Action{}
	for i := range actions {
		byName[actions[i].Name] = &actions[i]
	}
	sc := *base
	sc.Workload = make([]simulator.WorkloadStep, 0, len(calls))
	for i, c := range calls {
		a, ok := byName[c.Action]
		if !ok {
			return nil, fmt.Errorf("workload step %d: no action %q", i+1, c.Action)
		}
		st := a.Step(c.Param)
		if st.Name == "" {
			st.Name = c.String()
		}
		sc.Workload = append(sc.Workload, st)
	}
	sc.Description = base.Description + "; generated workload " + FormatCalls(calls)
	return &sc, nil
}

// WorkloadOptions tune ExploreWorkloads. The zero value of a field means
// its default.
type WorkloadOptions struct {
	// Strategy of the schedules (default "random").
	Strategy string
	// Schedules per generated workload (default 20): a workload with seed
	// s runs the schedules seeded s..s+Schedules-1 and fails on the first
	// violation. More than one schedule per workload keeps shrinking
	// effective: removing a step changes every schedule of the workload.
	Schedules int
	// Tests is how many workloads must pass (gopter's MinSuccessfulTests,
	// default 20).
	Tests int
	// MaxLen bounds a workload's length (default 6; lengths grow from 1 to
	// MaxLen over the tests, as gopter's sizes do).
	MaxLen int
	// GopterSeed seeds gopter's generator (default 1): the same options
	// generate the same workloads.
	GopterSeed int64
	// MaxShrinks bounds gopter's accepted shrink steps (default 50).
	MaxShrinks int
	// Faults overrides the scenario's fault budget when non-nil.
	Faults *model.FaultBudget
}

// WorkloadOption changes WorkloadOptions.
type WorkloadOption func(*WorkloadOptions)

// WithWorkloadStrategy sets WorkloadOptions.Strategy.
func WithWorkloadStrategy(s string) WorkloadOption {
	return func(o *WorkloadOptions) { o.Strategy = s }
}

// WithWorkloadSchedules sets WorkloadOptions.Schedules.
func WithWorkloadSchedules(n int) WorkloadOption {
	return func(o *WorkloadOptions) { o.Schedules = n }
}

// WithWorkloadTests sets WorkloadOptions.Tests.
func WithWorkloadTests(n int) WorkloadOption { return func(o *WorkloadOptions) { o.Tests = n } }

// WithWorkloadMaxLen sets WorkloadOptions.MaxLen.
func WithWorkloadMaxLen(n int) WorkloadOption { return func(o *WorkloadOptions) { o.MaxLen = n } }

// WithGopterSeed sets WorkloadOptions.GopterSeed.
func WithGopterSeed(seed int64) WorkloadOption {
	return func(o *WorkloadOptions) { o.GopterSeed = seed }
}

// WithWorkloadFaults sets WorkloadOptions.Faults.
func WithWorkloadFaults(b model.FaultBudget) WorkloadOption {
	return func(o *WorkloadOptions) { o.Faults = &b }
}

func (o *WorkloadOptions) defaults() {
	if o.Strategy == "" {
		o.Strategy = StrategyRandom
	}
	if o.Schedules <= 0 {
		o.Schedules = 20
	}
	if o.Tests <= 0 {
		o.Tests = 20
	}
	if o.MaxLen <= 0 {
		o.MaxLen = 6
	}
	if o.GopterSeed == 0 {
		o.GopterSeed = 1
	}
	if o.MaxShrinks <= 0 {
		o.MaxShrinks = 50
	}
}

// WorkloadReport is the outcome of ExploreWorkloads.
type WorkloadReport struct {
	Scenario string
	Options  WorkloadOptions
	// Verdict is VerdictViolation, VerdictInconclusive or VerdictError.
	Verdict string
	Err     error
	// Passed is how many generated workloads passed before the failing one
	// (all of Options.Tests when none failed).
	Passed int
	// Original is the failing workload as generated; Workload is the one
	// gopter shrank it to in Shrinks accepted steps. WorkloadSeed is the
	// generated schedule seed of both (it is not shrunk).
	Original     []Call
	Workload     []Call
	Shrinks      int
	WorkloadSeed uint64
	// Report is the exploration of the minimal workload: its Violation,
	// and the violating schedule's Index, Seed and Choices.
	Report Report
	// Evaluations counts the (workload, seed) pairs run, shrinking
	// included; Schedules the schedules they ran.
	Evaluations int
	Schedules   int
}

// ExploreWorkloads generates workloads of base with gopter: sequences of
// 1..MaxLen calls of actions (gen.SliceOf, whose shrinker drops chunks and
// single steps, then shrinks parameters), each paired with a schedule seed
// (gen.UInt64, not shrunk). A pair passes when none of its Options.Schedules
// schedules (the strategy's, seeded seed, seed+1, ...) violates a property
// of base. The first failing pair is shrunk by gopter; the report holds the
// minimal workload and its violating schedule. gopter runs with one worker
// and a fixed seed, so the same options give the same report.
func ExploreWorkloads(base *simulator.Scenario, actions []Action, opts ...WorkloadOption) WorkloadReport {
	var o WorkloadOptions
	for _, f := range opts {
		f(&o)
	}
	o.defaults()
	rep := WorkloadReport{Scenario: base.Name, Options: o, Verdict: VerdictInconclusive}
	if len(actions) == 0 {
		rep.Verdict, rep.Err = VerdictError, fmt.Errorf("no actions to generate workloads of %s from", base.Name)
		return rep
	}
	if _, err := NewChooser(o.Strategy, 0); err != nil {
		rep.Verdict, rep.Err = VerdictError, err
		return rep
	}
	callGen, err := genCall(actions)
	if err != nil {
		rep.Verdict, rep.Err = VerdictError, err
		return rep
	}

	var harnessErr error
	run := func(calls []Call, seed uint64) (Report, error) {
		sc, err := WorkloadScenario(base, actions, calls)
		if err != nil {
			return Report{}, err
		}
		r := Explore(sc, Options{Strategy: o.Strategy, Schedules: o.Schedules, Seed: seed, Faults: o.Faults, StopAtFirst: true})
		rep.Evaluations++
		rep.Schedules += r.Schedules
		if r.Verdict == VerdictError {
			return r, fmt.Errorf("workload %s, seed %d: %w", FormatCalls(calls), seed, r.Err)
		}
		return r, nil
	}
	check := func(calls []Call, seed uint64) bool {
		if harnessErr != nil {
			return true // stop spending time; reported below
		}
		r, err := run(calls, seed)
		if err != nil {
			harnessErr = err
			return true // an error is not a finding: do not shrink it
		}
		return r.Violation == nil
	}

	params := gopter.DefaultTestParametersWithSeed(o.GopterSeed)
	params.MinSuccessfulTests = o.Tests
	params.MinSize, params.MaxSize = 1, o.MaxLen+1
	params.MaxShrinkCount = o.MaxShrinks
	params.Workers = 1
	seeds := gen.UInt64().WithShrinker(gopter.NoShrinker)
	res := prop.ForAll(check, gen.SliceOf(callGen, reflect.TypeOf(Call{})), seeds).Check(params)
	rep.Passed = res.Succeeded

	switch {
	case harnessErr != nil:
		rep.Verdict, rep.Err = VerdictError, harnessErr
	case res.Status == gopter.TestError:
		rep.Verdict, rep.Err = VerdictError, fmt.Errorf("gopter: %v", res.Error)
	case res.Status == gopter.TestExhausted:
		rep.Verdict, rep.Err = VerdictError, fmt.Errorf("gopter exhausted: %d workloads discarded (an action's generator yields no value)", res.Discarded)
	case res.Status == gopter.TestFailed:
		if len(res.Args) != 2 {
			rep.Verdict, rep.Err = VerdictError, fmt.Errorf("gopter reported %d arguments, want 2", len(res.Args))
			break
		}
		rep.Workload = res.Args[0].Arg.([]Call)
		rep.Original = res.Args[0].OrigArg.([]Call)
		rep.Shrinks = res.Args[0].Shrinks
		rep.WorkloadSeed = res.Args[1].Arg.(uint64)
		// Run the minimal pair once more for its report (and as a check
		// that it still fails: the runs are deterministic).
		r, err := run(rep.Workload, rep.WorkloadSeed)
		switch {
		case err != nil:
			rep.Verdict, rep.Err = VerdictError, err
		case r.Violation == nil:
			rep.Verdict, rep.Err = VerdictError, fmt.Errorf("internal error: the shrunk workload %s with seed %d failed under gopter but passes when run again", FormatCalls(rep.Workload), rep.WorkloadSeed)
		default:
			rep.Verdict, rep.Report = VerdictViolation, r
			// For the trace; a parameter JSON cannot encode leaves it
			// empty, and CheckWorkloads says why it wrote none.
			rep.Report.Workload, _ = encodeCalls(rep.Workload)
		}
	}
	return rep
}

// CheckWorkloads runs ExploreWorkloads from a go test and fails t with
// WorkloadRecipe on a violation (or with the error of a harness failure).
//
//	explore.CheckWorkloads(t, myScenario(), []explore.Action{
//		{Name: "scale", Gen: gen.IntRange(1, 3), Step: func(p any) simulator.WorkloadStep { return scaleTo(p.(int)) }},
//	}, explore.WithWorkloadTests(30))
//
// As Check does, it writes the violating schedule's trace to CheckOutDir
// (SCENARIO.workload.trace; its workload line records the minimal
// workload) and prints the go test commands that replay, view and shrink
// it: given one of the flags -opcheck.replay, -opcheck.view or
// -opcheck.shrink, CheckWorkloads rebuilds the trace's workload with its
// actions and does that instead of generating workloads.
func CheckWorkloads(t testing.TB, base *simulator.Scenario, actions []Action, opts ...WorkloadOption) WorkloadReport {
	t.Helper()
	if verb, path := traceFlag(); path != "" {
		return checkWorkloadTrace(t, base, actions, verb, path)
	}
	rep := ExploreWorkloads(base, actions, opts...)
	switch rep.Verdict {
	case VerdictError:
		t.Fatalf("workloads of %s: %v", base.Name, rep.Err)
	case VerdictViolation:
		if rep.Report.Workload == "" {
			_, err := encodeCalls(rep.Workload)
			t.Fatalf("%s\nno trace written: %v", WorkloadRecipe(rep), err)
			return rep
		}
		rebuild := testRebuild(t.Name())
		dir := CheckOutDir()
		path, err := writeTrace(dir, rep.Report, rebuild)
		if err != nil {
			t.Fatalf("%s\ncannot write its trace to %s: %v; set $OPCHECK_OUT to a writable directory", WorkloadRecipe(rep), dir, err)
			return rep
		}
		rep.Report.Trace, rep.Report.Replay = path, testVerb(rebuild, "replay", path)
		t.Fatalf("%s\ntrace: %s\nreplay: %s\nview: %s\nshrink: %s\n(run them anywhere in the module; go test runs the test in its package directory %s, and the trace path is relative to it)",
			WorkloadRecipe(rep), path, rep.Report.Replay, testVerb(rebuild, "view", path), testVerb(rebuild, "shrink", path), packageDir())
	}
	return rep
}

// WorkloadRecipe is the human report of a workload violation: the minimal
// workload, the violation, the choices and how to replay it.
func WorkloadRecipe(rep WorkloadReport) string {
	if rep.Verdict != VerdictViolation || rep.Report.Violation == nil {
		return fmt.Sprintf("%s: no violation in %d generated workloads", rep.Scenario, rep.Passed)
	}
	r := rep.Report
	var b strings.Builder
	fmt.Fprintf(&b, "%s: generated workload violates %s at step %d, after %d passing workloads (gopter seed %d)\n", rep.Scenario, r.Violation.Property, r.Violation.Step, rep.Passed, rep.Options.GopterSeed)
	fmt.Fprintf(&b, "minimal workload (%d steps, shrunk in %d steps from %d): %s\n", len(rep.Workload), rep.Shrinks, len(rep.Original), FormatCalls(rep.Workload))
	fmt.Fprintf(&b, "generated as: %s\n", FormatCalls(rep.Original))
	if r.Strategy == StrategyExhaustive {
		fmt.Fprintf(&b, "schedule: %d of the exhaustive search of the workload\n", r.Index)
	} else {
		fmt.Fprintf(&b, "schedule: strategy %s, seed %d (schedule %d of the workload's seeds from %d)\n", r.Strategy, r.Seed, r.Index, rep.WorkloadSeed)
	}
	fmt.Fprintf(&b, "%s\n", r.Violation.String())
	choices := model.FormatChoices(r.Choices)
	fmt.Fprintf(&b, "choices: %s\n", choices)
	faults := fmt.Sprintf("model.FaultBudget{Crashes: %d, Stale: %d, Drops: %d, Evictions: %d}", r.Faults.Crashes, r.Faults.Stale, r.Faults.Drops, r.Faults.Evictions)
	if r.Strategy == StrategyExhaustive {
		// No seed: the recorded choices are the schedule.
		fmt.Fprintf(&b, "replay in Go: sc, _ := explore.WorkloadScenario(base, actions, %s); choices, _ := model.ParseChoices(%q); res, err := explore.Replay(sc, choices, &%s)", GoCalls(rep.Workload), choices, faults)
		return b.String()
	}
	fmt.Fprintf(&b, "replay in Go: sc, _ := explore.WorkloadScenario(base, actions, %s); explore.Check(t, sc, explore.WithStrategy(%q), explore.WithSeed(%d), explore.WithSchedules(1), explore.WithFaults(%s))", GoCalls(rep.Workload), r.Strategy, r.Seed, faults)
	b.WriteString("\n  or explore.Replay(sc, choices, &faults) with the choices above")
	return b.String()
}

// genCall generates a Call of one of the actions, uniformly, whose
// shrinker shrinks the parameter with its action's shrinker and sieve.
func genCall(actions []Action) (gopter.Gen, error) {
	type shrink struct {
		shrinker gopter.Shrinker
		sieve    func(any) bool
	}
	shrinks := map[string]shrink{}
	for _, a := range actions {
		if a.Gen == nil || a.Step == nil {
			return nil, fmt.Errorf("action %q needs a Gen and a Step", a.Name)
		}
		if _, dup := shrinks[a.Name]; dup {
			return nil, fmt.Errorf("two actions named %q", a.Name)
		}
		// The shrinker and sieve of one sample stand for the generator's
		// (a fixed seed: gopter's MinGenParams reads the clock).
		r := a.Gen(&gopter.GenParameters{MaxSize: 1, Rng: rand.New(gopter.NewLockedSource(1))})
		s := shrink{shrinker: r.Shrinker, sieve: r.Sieve}
		if s.shrinker == nil {
			s.shrinker = gopter.NoShrinker
		}
		shrinks[a.Name] = s
	}
	callShrinker := func(v any) gopter.Shrink {
		c := v.(Call)
		s := shrinks[c.Action]
		next := s.shrinker(c.Param)
		return func() (any, bool) {
			for {
				p, ok := next()
				if !ok {
					return nil, false
				}
				if s.sieve == nil || s.sieve(p) {
					return Call{Action: c.Action, Param: p}, true
				}
			}
		}
	}
	callType := reflect.TypeOf(Call{})
	return func(p *gopter.GenParameters) *gopter.GenResult {
		a := actions[p.Rng.Intn(len(actions))]
		v, ok := a.Gen(p).Retrieve()
		if !ok {
			return gopter.NewEmptyResult(callType)
		}
		return &gopter.GenResult{Result: Call{Action: a.Name, Param: v}, ResultType: callType, Shrinker: callShrinker}
	}, nil
}
