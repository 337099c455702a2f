package simulator

import (
	"fmt"

	"github.com/opcheck/opcheck/model"
)

// stepScheduler is the part of a World that decides which step runs next:
// it collects the enabled steps, asks the chooser among them (one
// model.Decision per step in the fault phase) or, in the settle phase,
// gives each its turn, and judges quiescence. It counts the steps against
// the scenario's bound and stops the run at a violation, a harness error
// or a prune.
type stepScheduler struct {
	recorder *model.Recorder

	enabled []Step         // the steps enabled at the current decision (reused)
	options []model.Option // the current decision's options (reused)
	decided int            // events recorded before the current decision
	// sinceFrom is decided before the current decision: the first event
	// of its Since (a checkpoint taken while the chooser decides resumes
	// at the same decision, which shows the same events).
	sinceFrom int
	// resumed: the world was resumed from a checkpoint taken at a
	// decision, and its first iteration goes straight to that decision
	// (the workload's check and the settle test ran before it).
	resumed bool

	steps     int
	turn      int  // the settle phase's rotation
	settling  bool // the faults are over: fair turns, liveness is judged
	offered   bool // the settle phase's start was offered to a SettleMerger
	quiescent bool
	stopped   bool

	lastRev   model.Revision // the store revision after the last step
	quietFrom model.Time     // when the store last changed

	settleStep *Step      // built once: collect offers it at most decisions
	tick       Step       // the clock step, built once per target time
	tickAt     model.Time // its target time
	tickRun    func()     // the tick's Run, built once: it ticks to tickAt
	tickLabel  []byte     // scratch for the tick's label

	// The built-in actors' steps are a function of the store's tables
	// and the clock: each keeps them in a memo keyed by the versions of
	// the tables it reads (and the clock, if it reads it). While neither
	// the store's revision nor the clock moved since the last collect,
	// which is most decisions (reads, deliveries), every such memo holds
	// what its actor offered then, and collect appends that instead of
	// asking each actor again.
	builtin    []bool   // per actor of the world: whether it is a built-in one
	actorSteps [][]Step // per built-in actor, its steps at the last collect
	actorsRev  model.Revision
	actorsAt   model.Time
	actorsSeen bool // actorSteps hold a collect's answers
}

// stop ends the run after the current step.
func (s *stepScheduler) stop() { s.stopped = true }

// run is the scheduler's loop: collect the enabled steps, let the chooser
// pick one (or, in the settle phase, take turns), run it, until
// quiescence, the step bound or a violation.
func (s *stepScheduler) run(w *World) {
	defer w.cleanup()
	max := w.Scenario.maxSteps()
	for s.steps < max && !s.stopped {
		if s.resumed {
			s.resumed = false
		} else {
			w.workload.advance(w)
			if !s.settling && s.shouldSettle(w, max) {
				w.settle()
			}
		}
		if s.settling {
			if !s.offered {
				s.offered = true
				if !s.settleGoesOn(w, max) {
					s.stopped = true
					w.explorer.notePruned()
					break
				}
			}
			w.faults.noteCaughtUp(w)
		}
		steps := s.collect(w)
		if len(steps) == 0 {
			s.quiescent = s.settling && w.workload.done()
			if !s.quiescent && !s.settling {
				w.settle()
				continue
			}
			break
		}
		if s.settling && idle(steps) && w.workload.done() && w.Clock.Now()-s.quietFrom >= w.Scenario.quietPeriod() {
			s.quiescent = true
			break
		}
		var i int
		if s.settling {
			// Fair turns: no choice is spent; every enabled step gets its
			// turn in rotation (single watch deliveries included, so a
			// reconcile may run between two events of a burst).
			i = s.turn % len(steps)
			s.turn++
		} else {
			i = s.recorder.Choose(s.decision(w, steps))
			if i == model.Prune {
				s.stopped = true
				w.explorer.notePruned()
				break // the chooser pruned this schedule
			}
		}
		st := steps[i]
		if st.Fault != 0 {
			w.faults.spend(st.Fault)
		}
		st.Run()
		if st.Fault != 0 {
			w.workload.noteFault(w)
		}
		s.steps++
		if w.Store.rev != s.lastRev {
			s.lastRev = w.Store.rev
			s.quietFrom = w.Clock.Now()
		}
	}
	if s.quiescent {
		w.record(model.ActorClock, model.OpQuiescent, "", "", "", fmt.Sprintf("no change for %s", (w.Clock.Now()-s.quietFrom).String()))
	}
	if !s.stopped && w.props.finish(&w.History) {
		s.stop()
	}
	if !w.explorer.pruned {
		w.props.addStuck(w.workload.stuckFinding())
	}
}

// SettleMerger is implemented by a chooser that merges states reached
// again (the exhaustive search's). The settle phase takes no choice: its
// fair turns start from the first enabled step, so from its first step on
// the run is a function of the state it starts in. The world offers that
// state to the chooser once per run, before the settle phase's first step
// (caches resumed, nothing else done yet), as it offers every decision's
// fingerprint: a chooser that has seen the state before may end the run
// there, as it does at a decision (model.Prune). A fault phase the budget
// ends (every fault taken, the workload done) ends without a decision, so
// without this the states after the last fault would never merge.
//
// It is not offered when the step bound forced the settle phase (two
// thirds of it spent): that phase's futures depend on the steps taken,
// which the fingerprint leaves out.
type SettleMerger interface {
	// SettleStarts is asked with the steps taken so far and the state's
	// fingerprint (World.StateHash); false ends the run, pruned.
	SettleStarts(steps int, fingerprint func() (uint64, bool)) bool
}

// settleGoesOn offers the settle phase's first state to a SettleMerger
// chooser; false when it ends the run there.
func (s *stepScheduler) settleGoesOn(w *World, max int) bool {
	m, ok := s.recorder.Inner.(SettleMerger)
	if !ok || s.steps >= max*2/3 {
		return true
	}
	return m.SettleStarts(s.steps, w.explorer.fingerprint)
}

// shouldSettle says whether the fault phase is over: the workload is done
// and no fault is left, or two thirds of the step bound are spent (the
// settle phase gets the last third to converge in).
func (s *stepScheduler) shouldSettle(w *World, max int) bool {
	if w.workload.done() && w.faults.budget.Total() == 0 {
		return true
	}
	return s.steps >= max*2/3
}

// startSettling enters the settle phase; the store counts as quiet from
// now.
func (s *stepScheduler) startSettling(now model.Time) {
	s.settling = true
	s.quietFrom = now
}

// idle: nothing but the clock, faults, resumes or the settle decision can
// move.
func idle(steps []Step) bool {
	for i := range steps {
		if steps[i].Actor != model.ActorClock && steps[i].Actor != model.ActorFault {
			return false
		}
	}
	return true
}

// collect lists every step that can run now, in a fixed order:
// controllers, built-in and external actors, the user, faults, the clock.
func (s *stepScheduler) collect(w *World) []Step {
	buf := s.enabled[:0]
	for _, h := range w.hosts {
		h := h
		if h.enabled() {
			buf = append(buf, w.reconcileStep(h))
		}
		for _, inf := range h.informers {
			if inf.hasPending() {
				buf = append(buf, w.informerSteps(h, inf).deliver)
			} else if inf.lost && s.settling {
				// The faults are over: the watch of an informer that
				// lost events expires and it relists, so liveness is not
				// judged on a cache a fault left wrong for good.
				h, inf := h, inf
				buf = append(buf, Step{Actor: h.actor, Class: model.StepDeliver, Label: "relist " + inf.kind.gvk.Kind, Run: func() { w.relist(h, inf, "lost events: watch expired (410), relisted") }})
			}
		}
	}
	buf = s.actorsSteps(w, buf)
	buf = w.workload.appendStep(w, buf)
	ordinary := len(buf)
	if !s.settling {
		buf = w.faults.steps(w, buf)
		if w.workload.done() {
			if s.settleStep == nil {
				s.settleStep = &Step{Actor: model.ActorFault, Class: model.StepSettle, Label: "settle", Run: w.settle}
			}
			buf = append(buf, *s.settleStep)
		}
	}
	if at, ok := w.nextTimer(); ok && (ordinary == 0 || w.Scenario.ClockAnytime) {
		if s.tick.Run == nil || s.tickAt != at {
			// The same tick is offered at every decision until it runs
			// or the next timer moves: built once per target time.
			// Its Run reads tickAt when it runs, which is right after
			// this collect (run calls nothing else in between); the
			// label is built in one allocation.
			s.tickAt = at
			if s.tickRun == nil {
				s.tickRun = func() { w.tick(s.tickAt) }
			}
			s.tickLabel = at.AppendTo(append(s.tickLabel[:0], "tick to "...))
			s.tick = Step{Actor: model.ActorClock, Class: model.StepClock, Label: string(s.tickLabel), Run: s.tickRun}
		}
		buf = append(buf, s.tick)
	}
	s.enabled = buf
	return buf
}

// actorsSteps appends every actor's steps, in the world's order: the
// built-in actors' from the last collect when the store's revision and the
// clock are where they were then (see stepScheduler.actorSteps;
// TestSchedulerReusedStepsMatchFreshOnes), the others' asked afresh.
func (s *stepScheduler) actorsSteps(w *World, buf []Step) []Step {
	if len(s.builtin) != len(w.actors) {
		s.builtin = make([]bool, len(w.actors))
		s.actorSteps = make([][]Step, len(w.actors))
		s.actorsSeen = false
		for i, a := range w.actors {
			s.builtin[i] = isMemoizedBuiltin(a)
		}
	}
	reuse := s.actorsSeen && w.Store.rev == s.actorsRev && w.Clock.Now() == s.actorsAt
	for i, a := range w.actors {
		switch {
		case !s.builtin[i]:
			buf = a.Steps(w, buf)
		case reuse:
			buf = append(buf, s.actorSteps[i]...)
		default:
			from := len(buf)
			buf = a.Steps(w, buf)
			s.actorSteps[i] = append(s.actorSteps[i][:0], buf[from:]...)
		}
	}
	s.actorsRev, s.actorsAt, s.actorsSeen = w.Store.rev, w.Clock.Now(), true
	return buf
}

// isMemoizedBuiltin reports whether a is one of the built-in actors whose
// steps are memoised on the store's tables and the clock alone.
func isMemoizedBuiltin(a Actor) bool {
	switch a.(type) {
	case *StatefulSetController, *Scheduler, *Kubelet, *PVCProtection, *GarbageCollector, *NamespaceController:
		return true
	}
	return false
}

// decision describes the choice among steps as data for the chooser: the
// options, the events since the previous decision, and the state
// fingerprint on demand.
func (s *stepScheduler) decision(w *World, steps []Step) model.Decision {
	opts := s.options[:0]
	for i := range steps {
		st := &steps[i]
		opts = append(opts, model.Option{Actor: st.Actor, Class: st.Class, Fault: st.Fault, Kind: st.Kind, Namespace: st.Namespace, Name: st.Name, Server: st.Server, Unobserved: st.Unobserved, StrandsPause: st.StrandsPause, Label: st.Label})
	}
	s.options = opts
	since := w.History.Events[s.decided:]
	s.sinceFrom, s.decided = s.decided, len(w.History.Events)
	return model.Decision{Kind: model.ChooseStep, Options: opts, Since: since, Fingerprint: w.explorer.fingerprint}
}

// hashState adds the phase and the clock to a state fingerprint; not the
// steps taken, which only the step bound and the forced settle phase count
// (see StateHash).
func (s *stepScheduler) hashState(now model.Time, f *fingerprint) {
	if s.settling {
		f.put(1)
	}
	f.put(uint64(now))
}
