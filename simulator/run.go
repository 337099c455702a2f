package simulator

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// DefaultWaitTimeout is how long (logical time) the user retries a
// workload step and waits for its condition before giving up (the finding
// WorkloadStuck), as a person would; WorkloadStep.Timeout overrides it.
const DefaultWaitTimeout = model.Time(10 * 60 * 1000)

// RunOptions tune one run.
type RunOptions struct {
	// Faults overrides the scenario's fault budget when non-nil.
	Faults *model.FaultBudget
	// KeepGoing continues after the first safety violation (by default the
	// run stops there: the rest of the schedule cannot make it right).
	KeepGoing bool
}

// Result is what one run produced.
type Result struct {
	History    *model.History
	Choices    []model.Choice
	Violations []properties.Violation
	// Quiescent: the settle phase ended with nothing left to do. False when
	// the run hit its step bound or stopped at a violation.
	Quiescent bool
	Steps     int
	// Reconciles counts the reconciles of controllers under test the run
	// started (crashed ones included). A world resumed from a checkpoint
	// (World.Checkpoint) counts only those it ran itself, so the sum
	// over an exploration is the reconciles it paid for.
	Reconciles int
	// MonitorReplayed is the number of events a world resumed from a
	// checkpoint showed fresh property monitors, because a monitor of the
	// checkpoint's run could not be forked (properties.Forker): 0 for a
	// world that did not resume, or whose monitors all fork.
	MonitorReplayed int
	World           *World
}

// Release hands the run's history and choice arrays back for a later run
// to reuse. Call it only when nothing will read the result again: not its
// History, its Choices or its World, not an event pointer a callback kept.
// It empties r (History, Choices and World become nil) so that a use after
// release fails loudly instead of reading another run's. Violations are
// copies and stay valid.
func (r *Result) Release() {
	if r == nil || r.History == nil {
		return
	}
	events := r.History.Events
	r.History.Events = nil
	r.History, r.World = nil, nil
	recycleHistory(events)
	if cap(r.Choices) > 0 {
		choices := r.Choices[:0]
		choiceArrays.Put(&choices)
	}
	r.Choices = nil
}

// choiceArrays holds the choice arrays of released runs (Result.Release)
// for the next world's recorder: a schedule records hundreds of choices,
// and growing the array from nothing copies it at every doubling.
var choiceArrays sync.Pool // of *[]model.Choice, length 0

// recycledChoices returns an empty choice array, a released one when
// there is one. Choices hold no pointers: nothing needs clearing.
func recycledChoices() []model.Choice {
	if p, ok := choiceArrays.Get().(*[]model.Choice); ok {
		return (*p)[:0]
	}
	return nil
}

// Run executes one schedule of the scenario: every decision is asked of
// chooser and recorded. The same choices give the same history, byte for
// byte. An error is a harness error (a broken scenario), never a finding.
func Run(sc *Scenario, chooser model.Chooser, opts RunOptions) (*Result, error) {
	w, err := NewWorld(sc, chooser, opts)
	if err != nil {
		return nil, err
	}
	return w.Run()
}

// Run drives a world built by NewWorld through one schedule. With the
// scenario's SyncWallClock it runs inside a testing/synctest bubble (see
// inWallClockBubble).
func (w *World) Run() (res *Result, err error) {
	inWallClockBubble(w.Scenario, func() {
		w.sched.run(w)
		res, err = &Result{History: &w.History, Choices: w.sched.recorder.Choices, Violations: w.props.violations, Quiescent: w.sched.quiescent, Steps: w.sched.steps, Reconciles: w.reconciles, MonitorReplayed: w.props.replayed, World: w}, w.props.harnessErr
	})
	return res, err
}

// Close releases a world that will not be Run: the controllers a Setup
// built wait on their manager's context until it ends. Run releases its
// world itself; Close after Run, or twice, does nothing more.
func (w *World) Close() { w.cleanup() }

// NewWorld builds the world of one run; its Run drives it (or Close
// releases it unrun). Every choice is asked of chooser and recorded.
func NewWorld(sc *Scenario, chooser model.Chooser, opts RunOptions) (w *World, err error) {
	return newWorld(sc, chooser, opts, nil)
}

// newWorld is NewWorld over the kinds of kinds when it is not nil (a
// checkpoint's: Checkpoint.Resume).
func newWorld(sc *Scenario, chooser model.Chooser, opts RunOptions, kinds *kindRegistry) (w *World, err error) {
	if sc.Scheme == nil {
		return nil, fmt.Errorf("scenario %q has no Scheme: build one with the AddToScheme of k8s.io/client-go/kubernetes/scheme and of your CRD types", sc.Name)
	}
	if len(sc.Controllers) == 0 {
		return nil, fmt.Errorf("scenario %q has no controller under test: add a ControllerSpec", sc.Name)
	}
	var built *World
	defer func() {
		// Unregistered types panic deep inside; report them as the
		// scenario's error.
		if p := recover(); p != nil {
			w, err = nil, fmt.Errorf("scenario %q: %v", sc.Name, p)
		}
		// A world that failed half built stops the controllers it
		// started: a Setup's controller waits on its context.
		if err != nil && built != nil {
			built.cleanup()
		}
	}()
	w = &World{
		Cluster:    NewCluster(sc.Scheme, ClusterOptions{APIServers: sc.APIServers, Events: worldEvents, StoreOptions: sc.StoreOptions, kinds: kinds}),
		Scenario:   sc,
		runOptions: opts,
		clients:    map[model.Actor]*Client{},
		sched:      stepScheduler{recorder: &model.Recorder{Inner: chooser, Choices: recycledChoices()}},
		faults:     faultInjector{budget: sc.Faults},
	}
	built = w
	if opts.Faults != nil {
		w.faults.budget = *opts.Faults
	}
	w.peek = w.Client("peek", 1, true)
	w.peek.silent = true
	w.explorer.fingerprint = w.StateHash
	_, w.explorer.mergesStates = chooser.(SettleMerger)
	w.props = newPropertyHook(sc, opts.KeepGoing)
	w.workload = workloadDriver{workload: sc.Workload}
	w.OnEvent = w.observe
	if err := w.Seed(sc.Objects...); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	if !sc.NoBuiltins {
		w.actors = append(w.actors, NewStatefulSetController(), NewScheduler(), NewKubelet(), NewPVCProtection(), NewGarbageCollector(), NewNamespaceController())
	}
	if sc.Actors != nil {
		w.actors = append(w.actors, sc.Actors(w)...)
	}
	for i := range sc.Controllers {
		spec := &sc.Controllers[i]
		if err := spec.validate(); err != nil {
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		// The first incarnation talks to apiserver-1; restarts choose.
		w.hosts = append(w.hosts, newHost(w.Cluster, spec.hostSpec(w), w.Server(1), 1))
	}
	staleKinds := sc.StaleKinds
	if len(staleKinds) == 0 {
		for i := range sc.Controllers {
			staleKinds = append(staleKinds, sc.Controllers[i].For)
		}
	}
	for _, o := range staleKinds {
		w.faults.staleKinds = append(w.faults.staleKinds, w.kindOf(o))
	}
	w.sched.lastRev = w.Store.rev
	return w, nil
}

// observe sees every recorded event: the explorer's write count and the
// property monitor.
func (w *World) observe(e *model.Event) {
	w.explorer.observe(e)
	for _, h := range w.hosts {
		if h.memory != nil && e.Actor == h.actor {
			h.memory.observe(e)
		}
	}
	if w.props.observe(e) {
		w.sched.stop()
	}
}

// fail ends the run with a harness error: the scenario is broken.
func (w *World) fail(err error) {
	w.props.fail(err)
	w.sched.stop()
}

// cleanup unwinds every reconcile still in flight so no goroutine outlives
// the run.
func (w *World) cleanup() {
	for _, h := range w.hosts {
		h.abandon()
	}
}

// settle ends the fault phase: paused caches resume, no more faults.
func (w *World) settle() {
	w.sched.startSettling(w.Clock.Now())
	w.faults.end(w)
}

// inWallClockBubble runs f, inside a testing/synctest bubble of its own
// when sc has SyncWallClock and the caller is not in a bubble already: the
// schedule's time.Now then moves only with the world's ticks (each sleeps
// the logical delta, which takes no real time in a bubble), whatever else
// runs in the process; every run gets its own bubble, so parallel runs do
// not share a clock. The bubble is entered with synctest.Test and a bare
// testing.T, so that commands (explore check, replay, shrink), not only
// tests, can run such scenarios; the world never calls the T. The
// reconciles a run starts end with it (cleanup).
func inWallClockBubble(sc *Scenario, f func()) {
	if sc == nil || !sc.SyncWallClock || inSynctestBubble() {
		f()
		return
	}
	synctest.Test(&testing.T{}, func(*testing.T) { f() })
}

// inSynctestBubble reports whether the caller runs inside a
// testing/synctest bubble: there, time starts at midnight UTC, 1 January
// 2000, and only moves by the bubble's sleeps, so it reads years before the
// real clock can.
func inSynctestBubble() bool {
	return time.Now().Before(time.Date(2001, time.January, 1, 0, 0, 0, 0, time.UTC))
}

// nextTimer is the earliest time anything waits for.
func (w *World) nextTimer() (model.Time, bool) {
	var best model.Time
	found := false
	consider := func(t model.Time, ok bool) {
		if ok && (!found || t < best) {
			best, found = t, true
		}
	}
	for _, h := range w.hosts {
		consider(h.queue.NextTimer())
	}
	for _, a := range w.actors {
		if t, ok := a.(Timed); ok {
			consider(t.NextTimer())
		}
	}
	w.workload.timers(w.Clock.Now(), consider)
	if found && best < w.Clock.Now() {
		best = w.Clock.Now()
	}
	return best, found
}

func (w *World) tick(at model.Time) {
	if w.Scenario != nil && w.Scenario.SyncWallClock && at > w.Clock.Now() && inSynctestBubble() {
		time.Sleep(time.Duration(at-w.Clock.Now()) * time.Millisecond)
	}
	w.Clock.AdvanceTo(at)
	for _, h := range w.hosts {
		h.queue.Fire(at)
	}
	w.record(model.ActorClock, model.OpTick, "", "", "", "")
}
