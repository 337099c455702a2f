package simulator

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	World     *World
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
		w.loop()
		res, err = &Result{History: &w.History, Choices: w.recorder.Choices, Violations: w.violations, Quiescent: w.quiescent, Steps: w.steps, World: w}, w.harnessErr
	})
	return res, err
}

// NewWorld builds the world of one run; its Run drives it. Every choice is
// asked of chooser and recorded.
func NewWorld(sc *Scenario, chooser model.Chooser, opts RunOptions) (w *World, err error) {
	if sc.Scheme == nil {
		return nil, fmt.Errorf("scenario %q has no Scheme: build one with the AddToScheme of k8s.io/client-go/kubernetes/scheme and of your CRD types", sc.Name)
	}
	if len(sc.Controllers) == 0 {
		return nil, fmt.Errorf("scenario %q has no controller under test: add a ControllerSpec", sc.Name)
	}
	defer func() {
		// Unregistered types panic deep inside; report them as the
		// scenario's error.
		if p := recover(); p != nil {
			w, err = nil, fmt.Errorf("scenario %q: %v", sc.Name, p)
		}
	}()
	w = &World{
		Cluster:  NewCluster(sc.Scheme, ClusterOptions{APIServers: sc.APIServers, StoreOptions: sc.StoreOptions}),
		Scenario: sc,
		recorder: &model.Recorder{Inner: chooser},
		clients:  map[model.Actor]*Client{},
		budget:   sc.Faults,
	}
	if opts.Faults != nil {
		w.budget = *opts.Faults
	}
	w.peek = w.Client("peek", 1, true)
	w.peek.silent = true
	w.fingerprint = w.StateHash
	w.keepGoing = opts.KeepGoing
	w.monitor = properties.NewRun(sc.Properties...)
	w.monitor.State().UseScheme(sc.Scheme)
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
		w.hosts = append(w.hosts, newHost(w, spec, w.Server(1), 1))
	}
	staleKinds := sc.StaleKinds
	if len(staleKinds) == 0 {
		for i := range sc.Controllers {
			staleKinds = append(staleKinds, sc.Controllers[i].For)
		}
	}
	for _, o := range staleKinds {
		w.staleKinds = append(w.staleKinds, w.kindOf(o))
	}
	w.lastRev = w.Store.rev
	return w, nil
}

func (w *World) observe(e *model.Event) {
	if e.Change != model.ChangeNone || e.Op == model.OpExternal {
		w.writes++
	}
	if w.monitor == nil || w.harnessErr != nil {
		return
	}
	defer w.recoverProperty(e)
	if vs := w.monitor.Observe(e); len(vs) > 0 {
		w.violations = append(w.violations, vs...)
		if !w.keepGoing {
			w.stopped = true
		}
	}
}

// recoverProperty turns a panicking property (an unknown kind asked of
// properties.State, a broken predicate) into the run's harness error: it
// is the scenario's bug, never the controller's, even when the event that
// triggered it came from a reconcile.
func (w *World) recoverProperty(e *model.Event) {
	if p := recover(); p != nil {
		at := "at the end of the run"
		if e != nil {
			at = fmt.Sprintf("at step %d (%s)", e.Step, e.Line())
		}
		w.harnessErr = fmt.Errorf("scenario %q: a property panicked %s: %v; fix the property", w.Scenario.Name, at, p)
		w.stopped = true
	}
}

// loop is the scheduler: collect the enabled steps, let the chooser pick
// one (or, in the settle phase, take turns), run it, until quiescence, the
// step bound or a violation.
func (w *World) loop() {
	defer w.cleanup()
	max := w.Scenario.maxSteps()
	for w.steps < max && !w.stopped {
		w.advanceWorkload()
		if !w.settling && w.shouldSettle(max) {
			w.settle()
		}
		w.noteCaughtUp()
		steps := w.enabledSteps()
		if len(steps) == 0 {
			w.quiescent = w.settling && w.workloadDone()
			if !w.quiescent && !w.settling {
				w.settle()
				continue
			}
			break
		}
		if w.settling && w.idle(steps) && w.workloadDone() && w.Clock.Now()-w.quietFrom >= w.Scenario.quietPeriod() {
			w.quiescent = true
			break
		}
		var i int
		if w.settling {
			// Fair turns: no choice is spent; every enabled step gets its
			// turn in rotation (single watch deliveries included, so a
			// reconcile may run between two events of a burst).
			i = w.turn % len(steps)
			w.turn++
		} else {
			i = w.recorder.Choose(w.decision(steps))
			if i == model.Prune {
				w.stopped, w.pruned = true, true
				break // the chooser pruned this schedule
			}
		}
		st := steps[i]
		if st.Fault != 0 {
			w.budget = w.budget.Spend(st.Fault)
		}
		st.Run()
		w.steps++
		if w.Store.rev != w.lastRev {
			w.lastRev = w.Store.rev
			w.quietFrom = w.Clock.Now()
		}
	}
	if w.quiescent {
		w.record(model.ActorClock, model.OpQuiescent, "", "", "", fmt.Sprintf("no change for %s", (w.Clock.Now()-w.quietFrom).String()))
	}
	if w.monitor != nil && !w.stopped {
		func() {
			defer w.recoverProperty(nil)
			w.violations = append(w.violations, w.monitor.Finish(&w.History)...)
		}()
	}
	if w.stuck != nil && len(w.violations) == 0 && w.harnessErr == nil && !w.pruned {
		w.violations = append(w.violations, *w.stuck)
	}
}

// noteCaughtUp records, once per run, the first moment after Settle when
// no watch cache is paused and every informer has received every event of
// its apiserver (and healed what it lost): from here on the controllers
// see the store as it is, and a reconcile that keeps failing is not
// failing on a view the faults left stale (properties.NoStuckReconcile).
func (w *World) noteCaughtUp() {
	if w.caughtUp || !w.settling || len(w.paused) > 0 {
		return
	}
	for _, h := range w.hosts {
		for _, inf := range h.informers {
			if inf.lost || inf.hasPending() {
				return
			}
		}
	}
	w.caughtUp = true
	w.record(model.ActorFault, model.OpCaughtUp, "", "", "", "every informer at revision "+w.Store.rev.String())
}

// cleanup unwinds every reconcile still in flight so no goroutine outlives
// the run.
func (w *World) cleanup() {
	for _, h := range w.hosts {
		h.abandon()
	}
}

func (w *World) shouldSettle(max int) bool {
	if w.workloadDone() && w.budget.Total() == 0 {
		return true
	}
	// Leave the settle phase a third of the step bound to converge in.
	return w.steps >= max*2/3
}

// settle ends the fault phase: paused caches resume, no more faults.
func (w *World) settle() {
	w.settling = true
	w.record(model.ActorFault, model.OpSettle, "", "", "", "faults are over: "+w.budget.String()+" left unused")
	for _, p := range w.paused {
		p.server.Resume(p.cache)
		w.record(model.ActorFault, model.OpResumeCache, p.cache.kind.gvk.Kind, "", "", string(model.APIServerActor(p.server.ID)))
	}
	w.paused = nil
	w.quietFrom = w.Clock.Now()
}

func (w *World) workloadDone() bool {
	return w.workload >= len(w.Scenario.Workload) && !w.waiting
}

// advanceWorkload checks the current step's wait condition on ground truth.
func (w *World) advanceWorkload() {
	if !w.waiting {
		return
	}
	st := &w.Scenario.Workload[w.workload-1]
	// Ground truth only changes with the store, and the condition only
	// sees the kinds it read: check again only once one of them changed.
	if w.Clock.Now() < w.waitDeadline && (w.untilRev == w.Store.rev+1 || w.until.unchanged()) {
		return
	}
	w.untilRev = w.Store.rev + 1
	if st.Until == nil || st.Until(context.Background(), w.until.reader()) {
		w.waiting = false
		w.record(model.ActorUser, model.OpWorkload, "", "", "", "done: "+st.Name)
		return
	}
	if w.Clock.Now() >= w.waitDeadline {
		w.waiting = false
		w.record(model.ActorUser, model.OpWorkload, "", "", "", "gave up waiting: "+st.Name)
		w.workloadStuck(st, fmt.Sprintf("the user waited for %q from step %d (t=%s) until t=%s, its Timeout of %s, and its condition never held on the store", st.Name, w.waitFrom, w.waitStart, w.Clock.Now(), st.timeout()))
	}
}

// workloadStuck notes the finding WorkloadStuck of the step that just gave
// up. It is reported at the end of the run, and only when no property
// found anything: a stuck controller usually is the reason the wait gave
// up, and the property that says why is the better report.
//
// A give-up while a fault is still in force is no finding: a paused cache
// stays paused, and an informer that lost an event stays wrong until it
// relists, until the faults end, which the workload's end starts; so the
// controller cannot be expected to converge in the meantime (the history
// still records the give-up).
func (w *World) workloadStuck(st *WorkloadStep, why string) {
	if w.stuck != nil || w.faultInForce() {
		return
	}
	last := &w.History.Events[len(w.History.Events)-1]
	w.stuck = &properties.Violation{
		Property:    WorkloadStuck,
		Statement:   "every workload step's command succeeds and its condition holds within the step's Timeout",
		Step:        last.Step,
		Event:       *last,
		Explanation: why + "; the user gave up at step " + strconv.Itoa(last.Step) + " and went on with the workload.",
		Related:     []int{w.waitFrom},
	}
}

// faultInForce reports whether a fault still holds the controllers back: a
// paused watch cache, or an informer that lost an event and has not
// relisted since.
func (w *World) faultInForce() bool {
	if len(w.paused) > 0 {
		return true
	}
	for _, h := range w.hosts {
		for _, inf := range h.informers {
			if inf.lost {
				return true
			}
		}
	}
	return false
}

// idle: nothing but the clock, faults, resumes or the settle decision can
// move.
func (w *World) idle(steps []Step) bool {
	for i := range steps {
		if steps[i].Actor != model.ActorClock && steps[i].Actor != model.ActorFault {
			return false
		}
	}
	return true
}

// enabledSteps lists every step that can run now, in a fixed order:
// controllers, built-in and external actors, the user, faults, the clock.
func (w *World) enabledSteps() []Step {
	buf := w.buf[:0]
	for _, h := range w.hosts {
		h := h
		if h.enabled() {
			label := "reconcile"
			if h.run != nil {
				label = "continue " + h.run.req.String()
			}
			buf = append(buf, Step{Actor: h.actor, Class: model.StepReconcile, Label: label, Run: h.step})
		}
		for _, inf := range h.informers {
			if inf.hasPending() {
				buf = append(buf, h.cachedSteps(w, inf).deliver)
			} else if inf.lost && w.settling {
				// The faults are over: the watch of an informer that
				// lost events expires and it relists, so liveness is not
				// judged on a cache a fault left wrong for good.
				h, inf := h, inf
				buf = append(buf, Step{Actor: h.actor, Class: model.StepDeliver, Label: "relist " + inf.kind.gvk.Kind, Run: func() { w.relist(h, inf, "lost events: watch expired (410), relisted") }})
			}
		}
	}
	for _, a := range w.actors {
		buf = a.Steps(w, buf)
	}
	if !w.waiting && w.workload < len(w.Scenario.Workload) && w.retryAt <= w.Clock.Now() {
		st := &w.Scenario.Workload[w.workload]
		buf = append(buf, Step{Actor: model.ActorUser, Class: model.StepWorkload, Label: st.Name, Run: w.runWorkload})
	}
	ordinary := len(buf)
	if !w.settling {
		buf = w.faultSteps(buf)
		if w.workloadDone() {
			buf = append(buf, Step{Actor: model.ActorFault, Class: model.StepSettle, Label: "settle", Run: w.settle})
		}
	}
	if at, ok := w.nextTimer(); ok && (ordinary == 0 || w.Scenario.ClockAnytime) {
		buf = append(buf, Step{Actor: model.ActorClock, Class: model.StepClock, Label: "tick to " + at.String(), Run: func() { w.tick(at) }})
	}
	w.buf = buf
	return buf
}

func (w *World) runWorkload() {
	st := &w.Scenario.Workload[w.workload]
	w.record(model.ActorUser, model.OpWorkload, "", "", "", "start: "+st.Name)
	if !w.attempting {
		w.attempting = true
		w.waitFrom, w.waitStart = w.History.Events[len(w.History.Events)-1].Step, w.Clock.Now()
		w.retryDeadline = w.Clock.Now() + st.timeout()
	}
	err := st.Do(context.Background(), w.ActorClient(model.ActorUser))
	if err != nil {
		if !st.retry(err) {
			w.harnessErr = fmt.Errorf("workload step %q failed: %w (a workload step may fail only with an error its Retry accepts, by default Conflict, AlreadyExists or NotFound; fix the scenario)", st.Name, err)
			w.stopped = true
			return
		}
		if w.Clock.Now() >= w.retryDeadline {
			w.record(model.ActorUser, model.OpWorkload, "", "", "", "gave up retrying: "+st.Name)
			w.workloadStuck(st, fmt.Sprintf("the user ran %q from step %d (t=%s) until t=%s, its Timeout of %s, and it kept failing: %s: %v", st.Name, w.waitFrom, w.waitStart, w.Clock.Now(), st.timeout(), apierrors.ReasonForError(err), err))
			w.attempting = false
			w.workload++
			return
		}
		if !apierrors.IsConflict(err) {
			// Not at the next step: the old object must finish
			// terminating, or a cache catch up, which takes time.
			w.retryAt = w.Clock.Now() + DefaultRetryDelay
		}
		return // retried, as a user re-running kubectl would
	}
	w.attempting = false
	w.workload++
	w.waiting = true
	w.untilRev = 0
	w.until.reset(w)
	w.waitFrom, w.waitStart = w.History.Events[len(w.History.Events)-1].Step, w.Clock.Now()
	w.waitDeadline = w.Clock.Now() + st.timeout()
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
	if w.waiting {
		consider(w.waitDeadline, true)
	}
	if w.retryAt > w.Clock.Now() {
		consider(w.retryAt, true)
	}
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

// deliver hands the informer the next watch event its apiserver has for
// it, one event per step as client-go delivers them, so that every
// intermediate state (a pod Terminating, then gone) reaches the handlers
// and the reconciler can read it in between. An informer that fell out of
// the apiserver's window relists instead (410 Gone).
func (w *World) deliver(h *Host, inf *informer) {
	c, mustRelist := inf.next()
	if mustRelist {
		w.relist(h, inf, "watch expired (410): relisted")
		return
	}
	if c == nil {
		return
	}
	old := inf.apply(c)
	h.handle(inf.kind, old, c.Object)
	w.Record(model.Event{Actor: h.actor, Op: model.OpDeliver, Kind: inf.kind.gvk.Kind, Namespace: c.Object.GetNamespace(), Name: c.Object.GetName(), Rev: c.Rev, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: c.Type.String()})
}

// relist replaces the informer's contents with its apiserver's list and
// notifies the handlers of every difference, deletions it missed included.
func (w *World) relist(h *Host, inf *informer, why string) {
	olds, news := inf.relistChanges()
	for i := range olds {
		switch {
		case news[i] == nil:
			h.handle(inf.kind, olds[i], olds[i]) // a deletion the informer missed
		default:
			h.handle(inf.kind, olds[i], news[i])
		}
	}
	w.Record(model.Event{Actor: h.actor, Op: model.OpDeliver, Kind: inf.kind.gvk.Kind, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: why + "; " + strconv.Itoa(len(olds)) + " changed"})
}

// faultSteps appends the faults the budget still allows.
func (w *World) faultSteps(buf []Step) []Step {
	b := w.budget
	// The fault steps only change with the hosts, the servers and the
	// kinds, so they are built once (this runs at every decision).
	if b.Crashes > 0 {
		for _, h := range w.hosts {
			if h.crashSteps == nil {
				for _, s := range w.Servers {
					h, s := h, s
					h.crashSteps = append(h.crashSteps, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultCrash, Server: s.ID, Label: "crash " + string(h.actor) + ", restart on " + string(model.APIServerActor(s.ID)), Run: func() { w.crash(h, s) }})
				}
			}
			buf = append(buf, h.crashSteps...)
		}
	}
	if b.Stale > 0 && len(w.paused) == 0 {
		if w.pauseSteps == nil {
			for _, s := range w.Servers {
				for _, k := range w.staleKinds {
					s, k := s, k
					w.pauseSteps = append(w.pauseSteps, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultStale, Kind: k.gvk.Kind, Label: "pause " + string(model.APIServerActor(s.ID)) + " " + k.gvk.Kind + " cache", Run: func() { w.pause(s, k) }})
				}
			}
		}
		buf = append(buf, w.pauseSteps...)
	}
	if len(w.paused) > 0 {
		p := w.paused[0]
		buf = append(buf, Step{Actor: model.ActorFault, Class: model.StepResume, Label: "resume " + string(model.APIServerActor(p.server.ID)) + " " + p.cache.kind.gvk.Kind + " cache", Run: w.resume})
	}
	if b.Drops > 0 {
		for _, h := range w.hosts {
			for _, inf := range h.informers {
				if inf.hasPending() {
					buf = append(buf, h.cachedSteps(w, inf).drop)
				}
			}
		}
	}
	if b.Expiries > 0 {
		for _, h := range w.hosts {
			for _, inf := range h.informers {
				h, inf := h, inf
				buf = append(buf, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultExpire, Kind: inf.kind.gvk.Kind, Label: "expire " + inf.kind.gvk.Kind + " watch of " + string(h.actor), Run: func() { w.expire(h, inf) }})
			}
		}
	}
	if b.Evictions > 0 {
		buf = append(buf, w.evictionSteps()...)
	}
	return buf
}

// evictionSteps are the pods an eviction may strike: running, not being
// deleted. They only change with the store, so they are computed once per
// revision (this runs at every decision).
func (w *World) evictionSteps() []Step {
	if w.evictRev == w.Store.rev+1 {
		return w.evictSteps
	}
	w.evictRev = w.Store.rev + 1
	w.evictSteps = w.evictSteps[:0]
	for _, obj := range w.PeekList(&corev1.Pod{}, "") {
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning {
			ns, name := pod.Namespace, pod.Name
			w.evictSteps = append(w.evictSteps, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultEvict, Label: "evict pod " + ns + "/" + name, Run: func() { w.evict(ns, name) }})
		}
	}
	return w.evictSteps
}

// crash kills the controller at its current API call and starts a new
// incarnation connected to apiserver s.
func (w *World) crash(h *Host, s *APIServer) {
	detail := "idle"
	if h.run != nil {
		detail = fmt.Sprintf("in reconcile %s before API call %d", h.run.req, h.run.calls) // calls counts the call it is parked at
	}
	h.abandon()
	w.record(model.ActorFault, model.OpCrash, "", "", string(h.actor), detail)
	nh := newHost(w, h.spec, s, h.incarnation+1)
	for i, old := range w.hosts {
		if old == h {
			w.hosts[i] = nh
		}
	}
	detail = string(model.APIServerActor(s.ID))
	for _, inf := range nh.informers {
		detail += fmt.Sprintf("; %s listed at rev %d", inf.kind.gvk.Kind, inf.rev)
		if inf.rev < w.Store.rev && w.Server(s.ID).Cache(inf.kind).paused {
			detail += " (paused cache)"
		}
	}
	w.record(model.ActorFault, model.OpRestart, "", "", string(nh.actor), detail)
}

func (w *World) pause(s *APIServer, k *kindInfo) {
	c := s.Cache(k)
	s.Sync(c) // a following cache is at the head when the partition starts
	s.Pause(c)
	w.paused = append(w.paused, &pausedCache{server: s, cache: c})
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpPauseCache, Kind: k.gvk.Kind, Server: s.ID, ReadRev: c.rev, HeadRev: w.Store.rev})
}

func (w *World) resume() {
	p := w.paused[0]
	w.paused = w.paused[1:]
	p.server.Resume(p.cache)
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpResumeCache, Kind: p.cache.kind.gvk.Kind, Server: p.server.ID, ReadRev: p.cache.rev, HeadRev: w.Store.rev})
}

// drop loses the next watch event the informer would receive, whatever
// its type (an object's last event, its deletion, included): the informer
// moves past it without seeing it, and stays wrong about that object until
// it relists (a restart, a watch expiry, or the settle phase's relist).
func (w *World) drop(h *Host, inf *informer) {
	c, mustRelist := inf.next()
	if c == nil || mustRelist {
		return
	}
	inf.skip(c)
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpDropEvent, Kind: inf.kind.gvk.Kind, Namespace: c.Object.GetNamespace(), Name: c.Object.GetName(), Rev: c.Rev, HeadRev: w.Store.rev, Detail: c.Type.String() + " for " + string(h.actor)})
}

// expire answers the informer's watch with 410 Gone: it relists from its
// apiserver (stale, if that cache is paused) and notifies every
// difference.
func (w *World) expire(h *Host, inf *informer) {
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpExpireWatch, Kind: inf.kind.gvk.Kind, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: "for " + string(h.actor)})
	w.relist(h, inf, "watch expired (410): relisted")
}

func (w *World) evict(namespace, name string) {
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpEvict, Kind: "Pod", Namespace: namespace, Name: name, HeadRev: w.Store.rev})
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = namespace, name
	_ = w.ActorClient(model.ActorFault).Delete(context.Background(), pod, client.PropagationPolicy("Background"))
}

// informerSteps are the steps of one informer of a host: delivering its
// next watch event, and dropping one.
type informerSteps struct{ deliver, drop Step }

// cachedSteps builds an informer's steps once: their labels and closures
// do not change while the host lives.
func (h *Host) cachedSteps(w *World, inf *informer) *informerSteps {
	if st := h.infSteps[inf]; st != nil {
		return st
	}
	if h.infSteps == nil {
		h.infSteps = map[*informer]*informerSteps{}
	}
	st := &informerSteps{
		deliver: Step{Actor: h.actor, Class: model.StepDeliver, Label: "deliver " + inf.kind.gvk.Kind, Run: func() { w.deliver(h, inf) }},
		drop:    Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultDrop, Kind: inf.kind.gvk.Kind, Label: "drop " + inf.kind.gvk.Kind + " event for " + string(h.actor), Run: func() { w.drop(h, inf) }},
	}
	h.infSteps[inf] = st
	return st
}

// decision describes the choice among steps as data for the chooser: the
// options, the events since the previous decision, and the state
// fingerprint on demand.
func (w *World) decision(steps []Step) model.Decision {
	opts := w.options[:0]
	for i := range steps {
		st := &steps[i]
		opts = append(opts, model.Option{Actor: st.Actor, Class: st.Class, Fault: st.Fault, Kind: st.Kind, Server: st.Server, Label: st.Label})
	}
	w.options = opts
	since := w.History.Events[w.decided:]
	w.decided = len(w.History.Events)
	return model.Decision{Kind: model.ChooseStep, Options: opts, Since: since, Fingerprint: w.fingerprint}
}
