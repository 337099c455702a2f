package simulator

import (
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// Forkable is implemented by an external system (an actor a scenario's
// Actors adds) whose state a checkpoint can copy: the exhaustive search
// then resumes schedules from a checkpoint instead of replaying them from
// the start. A scenario with an external system that does not implement it
// is never checkpointed, and every schedule is replayed.
type Forkable interface {
	// ForkState returns a copy of the system's state, sharing nothing the
	// system goes on changing.
	ForkState() any
	// ResumeState sets the state of a fresh system of the same scenario
	// (built by Actors for another world) to one ForkState returned. It
	// may be called with the same value for several systems: it must
	// copy what it keeps.
	ResumeState(state any)
}

// Checkpoint is a copy of a world's state at one decision of its fault
// phase (World.Checkpoint). Resume builds a world that goes on from that
// decision as the checkpointed one would have, given the same choices:
// the same events, byte for byte, the same fingerprints, the same
// verdict (TestCheckpointResumesTheSameSchedule). A checkpoint holds the
// store's objects and changes shared with the world it was taken from
// (both treat them as immutable) and copies everything else; it is never
// changed, so any number of worlds may resume from it, on any goroutine.
type Checkpoint struct {
	sc    *Scenario
	opts  RunOptions
	kinds *kindRegistry

	tables                          map[*kindInfo]kindData
	rev                             model.Revision
	changes                         []*Change
	uidSeq, nameSeq, ipSeq, portSeq uint64
	namespaces                      map[string]bool
	servers                         []serverState
	now                             model.Time
	log                             *historyLog // the events and choices so far

	hosts     []hostState
	externals []any // per actor of the world, ForkState's (nil for built-in actors)

	steps     int
	lastRev   model.Revision
	quietFrom model.Time
	decided   int
	workload  workloadDriver // its position only, no memos
	budget    model.FaultBudget
	paused    []pausedState
	caughtUp  bool
	writes    int
	// hashes are the content hashes of the objects above that the world
	// had computed (World.knownHashes): read only, shared by every world
	// resumed from the checkpoint.
	hashes map[client.Object]uint64
	// props is a fork of the world's property run (properties.Run.Fork),
	// never fed: a resumed world forks it again. Nil when a monitor
	// cannot be forked; the resumed world then shows a fresh run the
	// history.
	props *properties.Run
}

// historyLog holds a checkpoint's history and choices as segments: the
// ones recorded since the world's previous checkpoint (or the one it
// resumed from), after prev's. A search keeps thousands of checkpoints
// alive at once, most of them of one schedule and its descendants; each
// copying the whole history took gigabytes on zookeeper/fixed.
type historyLog struct {
	prev              *historyLog
	events            []model.Event
	choices           []model.Choice
	nEvents, nChoices int // the totals, prev's segments included
}

// extend returns the log of a world whose history and choices begin with
// l's (l may be nil): l and a segment with the rest.
func (l *historyLog) extend(events []model.Event, choices []model.Choice) *historyLog {
	var e, c int
	if l != nil {
		e, c = l.nEvents, l.nChoices
	}
	return &historyLog{prev: l, events: slices.Clone(events[e:]), choices: slices.Clone(choices[c:]), nEvents: len(events), nChoices: len(choices)}
}

// appendTo appends the log's events and choices, in order.
func (l *historyLog) appendTo(events []model.Event, choices []model.Choice) ([]model.Event, []model.Choice) {
	if l == nil {
		return events, choices
	}
	events, choices = l.prev.appendTo(events, choices)
	return append(events, l.events...), append(choices, l.choices...)
}

type serverState struct {
	caches      []WatchCache // in the registry's order of their kinds
	cacheReader bool
}

type hostState struct {
	server, incarnation int
	informers           []informerState
	queue               workQueue
}

type informerState struct {
	kind    *kindInfo
	rev     model.Revision
	objects map[string]client.Object
	lost    bool
}

type pausedState struct {
	server int
	kind   *kindInfo
	seen   bool
}

// Checkpoint copies the world's state at the decision its chooser is
// being asked (call it from the chooser's Choose, for a ChooseStep
// decision of the fault phase). It reports false where a copy could not
// go on as the world would: while a reconcile is in flight (its
// goroutine's stack cannot be copied), when a controller is built by a
// Setup (controller-runtime's machinery keeps state of its own) or keeps
// memory between reconciles, when the scenario runs on the wall clock
// (SyncWallClock: the reconciler reads time the bubble keeps), when an
// external system does not implement Forkable, and once the run found a
// violation or a harness error.
func (w *World) Checkpoint() (*Checkpoint, bool) {
	s := &w.sched
	if s.settling || s.stopped || w.Scenario.SyncWallClock || len(w.props.violations) > 0 || w.props.harnessErr != nil {
		return nil, false
	}
	for _, h := range w.hosts {
		if h.run != nil || h.managed != nil || h.spec.setup != nil || h.spec.keepsMemory || h.memory != nil {
			return nil, false
		}
	}
	externals := make([]any, len(w.actors))
	for i, a := range w.actors {
		if isMemoizedBuiltin(a) {
			continue // only memos of their own
		}
		f, ok := a.(Forkable)
		if !ok {
			return nil, false
		}
		externals[i] = f.ForkState()
	}
	st := w.Store
	// The history and the choices so far stay what they are: the next
	// checkpoint of this world shares this one's log.
	cp := &Checkpoint{
		sc: w.Scenario, opts: w.runOptions, kinds: st.kinds.clone(), externals: externals,
		tables: make(map[*kindInfo]kindData, len(st.tables)),
		rev:    st.rev, changes: st.history[:len(st.history):len(st.history)],
		uidSeq: st.uidSeq, nameSeq: st.nameSeq, ipSeq: st.ipSeq, portSeq: st.portSeq,
		namespaces: maps.Clone(st.namespaces),
		now:        w.Clock.Now(),
		log:        w.explorer.log.extend(w.History.Events, s.recorder.Choices),
		steps:      s.steps, lastRev: s.lastRev, quietFrom: s.quietFrom, decided: s.sinceFrom,
		budget: w.faults.budget, caughtUp: w.faults.caughtUp, writes: w.explorer.writes,
	}
	w.explorer.log = cp.log
	for k, t := range st.tables {
		cp.tables[k] = kindData{info: k, objects: maps.Clone(t.objects), changes: t.changes[:len(t.changes):len(t.changes)]}
	}
	for _, srv := range w.Servers {
		ss := serverState{cacheReader: srv.cacheReader}
		for _, k := range st.kinds.ordered {
			if c := srv.caches[k]; c != nil {
				ss.caches = append(ss.caches, WatchCache{kind: k, rev: c.rev, objects: maps.Clone(c.objects), next: c.next, paused: c.paused})
			}
		}
		cp.servers = append(cp.servers, ss)
	}
	for _, h := range w.hosts {
		hs := hostState{server: h.server.ID, incarnation: h.incarnation, queue: h.queue.clone()}
		for _, inf := range h.informers {
			hs.informers = append(hs.informers, informerState{kind: inf.kind, rev: inf.rev, objects: maps.Clone(inf.objects), lost: inf.lost})
		}
		cp.hosts = append(cp.hosts, hs)
	}
	for _, p := range w.faults.paused {
		cp.paused = append(cp.paused, pausedState{server: p.server.ID, kind: p.cache.kind, seen: p.seen})
	}
	cp.workload = w.workload.position()
	cp.hashes = w.knownHashes()
	if w.props.monitor != nil {
		cp.props, _ = w.props.monitor.Fork()
	}
	return cp, true
}

// Steps is the number of steps the checkpointed world had taken.
func (cp *Checkpoint) Steps() int { return cp.steps }

// Resume builds a world at the checkpoint's decision, whose decisions,
// that one first, are asked of chooser. Its Run goes on from there.
func (cp *Checkpoint) Resume(chooser model.Chooser) (*World, error) {
	w, err := newWorld(cp.sc, chooser, cp.opts, cp.kinds.clone())
	if err != nil {
		return nil, err
	}
	if err := cp.load(w); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// load overwrites a world newWorld just built with the checkpoint's state.
func (cp *Checkpoint) load(w *World) error {
	st := w.Store
	st.tables = make(map[*kindInfo]*kindData, len(cp.tables))
	for k, t := range cp.tables {
		st.tables[k] = &kindData{info: k, objects: maps.Clone(t.objects), changes: t.changes}
	}
	st.rev, st.history = cp.rev, cp.changes
	st.uidSeq, st.nameSeq, st.ipSeq, st.portSeq = cp.uidSeq, cp.nameSeq, cp.ipSeq, cp.portSeq
	st.namespaces = maps.Clone(cp.namespaces)
	for i, ss := range cp.servers {
		srv := w.Servers[i]
		srv.cacheReader = ss.cacheReader
		srv.caches = make(map[*kindInfo]*WatchCache, len(ss.caches))
		for _, c := range ss.caches {
			srv.caches[c.kind] = &WatchCache{kind: c.kind, rev: c.rev, objects: maps.Clone(c.objects), next: c.next, paused: c.paused}
		}
	}
	w.Clock.AdvanceTo(cp.now)
	w.History.Events, w.sched.recorder.Choices = cp.log.appendTo(w.History.Events[:0], w.sched.recorder.Choices[:0])
	w.explorer.log = cp.log

	for i, hs := range cp.hosts {
		h := w.hosts[i]
		if h.server.ID != hs.server || h.incarnation != hs.incarnation {
			// A crash restarted it: build the incarnation it is.
			nh := newHost(w.Cluster, h.spec, w.Server(hs.server), hs.incarnation)
			h.abandon()
			w.replaceHost(h, nh)
			h = nh
		}
		for j, is := range hs.informers {
			inf := h.watch(is.kind)
			if h.informers[j] != inf {
				return fmt.Errorf("simulator: resuming a checkpoint of scenario %q: %s's informers are not in the checkpointed order (this is opcheck's bug: report it)", cp.sc.Name, h.actor)
			}
			inf.server = h.server
			inf.cache = h.server.Cache(is.kind)
			inf.table = st.table(is.kind)
			inf.rev, inf.objects, inf.lost = is.rev, maps.Clone(is.objects), is.lost
		}
		*h.queue = hs.queue.clone()
	}
	for i, state := range cp.externals {
		if state != nil {
			w.actors[i].(Forkable).ResumeState(state)
		}
	}

	s := &w.sched
	s.steps, s.lastRev, s.quietFrom, s.decided = cp.steps, cp.lastRev, cp.quietFrom, cp.decided
	s.resumed = true
	w.workload = cp.workload
	w.workload.until.reset(w)
	w.faults.budget, w.faults.caughtUp = cp.budget, cp.caughtUp
	w.faults.paused = nil
	for _, p := range cp.paused {
		srv := w.Server(p.server)
		w.faults.paused = append(w.faults.paused, &pausedCache{server: srv, cache: srv.Cache(p.kind), seen: p.seen})
	}
	w.explorer.writes = cp.writes
	w.explorer.inherited = cp.hashes

	// The property monitors go on from the checkpoint's fork of them.
	// Where one cannot be forked: they are a function of the events they
	// saw, so show fresh ones the checkpoint's history.
	if cp.props != nil {
		if run, ok := cp.props.Fork(); ok {
			w.props = propertyHook{scenario: cp.sc.Name, monitor: run, keepGoing: cp.opts.KeepGoing}
			return nil
		}
	}
	w.props = newPropertyHook(cp.sc, cp.opts.KeepGoing)
	w.props.replayed = len(w.History.Events)
	for i := range w.History.Events {
		if w.props.observe(&w.History.Events[i]) || w.props.harnessErr != nil {
			return fmt.Errorf("simulator: resuming a checkpoint of scenario %q: its properties judge its history differently at step %d (a property that depends on more than the events it is shown?)", cp.sc.Name, i+1)
		}
	}
	return nil
}

// position is a copy of the driver without its memos and its step's
// closure, which a world rebuilds for itself.
func (d *workloadDriver) position() workloadDriver {
	p := *d
	p.untilFailed, p.until, p.runStep = revisionMemo[struct{}]{}, untilMemo{}, nil
	return p
}

// clone copies a work queue.
func (q *workQueue) clone() workQueue {
	return workQueue{
		ready:      slices.Clone(q.ready),
		queued:     maps.Clone(q.queued),
		processing: maps.Clone(q.processing),
		dirty:      maps.Clone(q.dirty),
		timers:     slices.Clone(q.timers),
		timerSeq:   q.timerSeq,
		failures:   maps.Clone(q.failures),
	}
}
