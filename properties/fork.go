package properties

import (
	"hash"
	"maps"
	"slices"

	"github.com/opcheck/opcheck/model"
)

// Forker is implemented by monitors whose state can be copied. A Run whose
// live monitors all implement it can be forked (Run.Fork): the exhaustive
// search's checkpoints keep a fork of the run they were taken in, and a
// world resumed from one forks it again instead of showing a fresh run the
// whole history up to the checkpoint. A monitor that does not implement it
// (Observer, MonitorFuncs, a user type without Fork) is still correct: the
// resumed world replays the history into a fresh run, as it always could.
type Forker interface {
	// Fork returns a monitor in the same state that goes on on its own:
	// nothing either of the two is shown later changes the other. It is
	// called on monitors no one else is using at the time, possibly on
	// several goroutines at once for one monitor: it must only read it.
	Fork() Monitor
}

// Fork returns a run in r's state that goes on on its own: the same
// properties, the same ground truth, each monitor forked (Forker), the
// same violations so far. It reports false, and returns nil, when a
// monitor not yet violated does not implement Forker. Fork only reads r:
// several goroutines may fork one run no one is feeding at the time.
func (r *Run) Fork() (*Run, bool) {
	monitors := make([]Monitor, len(r.monitors))
	for i, m := range r.monitors {
		if r.found[i] != nil {
			monitors[i] = m // never consulted again
			continue
		}
		f, ok := m.(Forker)
		if !ok {
			return nil, false
		}
		monitors[i] = f.Fork()
	}
	return &Run{
		props:    r.props,
		monitors: monitors,
		found:    slices.Clone(r.found), // a violation is never changed once found
		state:    r.state.fork(),
		finished: r.finished,
	}, true
}

// fork copies the state. Stored objects are shared (events' objects, never
// mutated) and so are the sorted key slices (replaced, never changed); the
// maps that change are copied.
func (s *State) fork() *State {
	c := *s
	c.kinds = make(map[string]map[string]stored, len(s.kinds))
	for k, objs := range s.kinds {
		c.kinds[k] = maps.Clone(objs)
	}
	c.sorted = maps.Clone(s.sorted)
	c.typeKinds = maps.Clone(s.typeKinds)
	c.faults = s.faults.fork()
	return &c
}

// fork copies the fault log.
func (f *faultLog) fork() faultLog {
	c := faultLog{faults: slices.Clone(f.faults), stale: f.stale}
	if f.inflight != nil {
		c.inflight = make(map[model.Actor]*reconcileSoFar, len(f.inflight))
		for a, r := range f.inflight {
			rc := *r
			c.inflight[a] = &rc
		}
	}
	if f.last != nil {
		last := *f.last
		c.last = &last
	}
	return c
}

// statefulMonitor is a monitor whose state is all in a value of type S,
// which its functions take by pointer: Fork copies the value with clone
// (a plain copy when clone is nil). hash writes the part of the state
// that can change a verdict (nil: none, as Fingerprinted with nil).
type statefulMonitor[S any] struct {
	st      *S
	observe func(st *S, s *State, e *model.Event) *Violation
	finish  func(st *S, s *State, h *model.History) *Violation
	hash    func(st *S, h hash.Hash64)
	clone   func(st *S) S
}

func (m statefulMonitor[S]) Observe(s *State, e *model.Event) *Violation {
	if m.observe == nil {
		return nil
	}
	return m.observe(m.st, s, e)
}

func (m statefulMonitor[S]) Finish(s *State, h *model.History) *Violation {
	if m.finish == nil {
		return nil
	}
	return m.finish(m.st, s, h)
}

func (m statefulMonitor[S]) HashState(h hash.Hash64) {
	if m.hash != nil {
		m.hash(m.st, h)
	}
}

func (m statefulMonitor[S]) Fork() Monitor {
	var c S
	if m.clone != nil {
		c = m.clone(m.st)
	} else {
		c = *m.st
	}
	m.st = &c
	return m
}

// statelessMonitor is a monitor that keeps nothing between events: its
// verdicts depend only on the State and the event (its fingerprint is
// empty), and a fork is the monitor itself.
type statelessMonitor struct{ monitorFuncs }

func (statelessMonitor) HashState(hash.Hash64) {}

func (m statelessMonitor) Fork() Monitor { return m }

// wholeHistoryMonitor judges the whole history at Finish and keeps nothing
// while it is shown events, so a fork is the monitor itself. It has no
// fingerprint: its verdict depends on the history, not on the state.
type wholeHistoryMonitor struct{ monitorFuncs }

func (m wholeHistoryMonitor) Fork() Monitor { return m }
