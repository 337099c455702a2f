package simulator

import (
	"fmt"
	"hash"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// propertyHook is the part of a World that judges the run: it feeds every
// recorded event to the scenario's property monitor, collects the
// violations, and holds the run's harness error (a broken scenario or a
// panicking property, never the controller's finding).
type propertyHook struct {
	scenario   string
	monitor    *properties.Run
	keepGoing  bool // go on after the first violation
	violations []properties.Violation
	harnessErr error
	// replayed counts the events a world resumed from a checkpoint showed
	// its fresh monitors (Checkpoint.load): 0 when it forked them.
	replayed int
}

func newPropertyHook(sc *Scenario, keepGoing bool) propertyHook {
	p := propertyHook{scenario: sc.Name, monitor: properties.NewRun(sc.Properties...), keepGoing: keepGoing}
	p.monitor.State().UseScheme(sc.Scheme)
	return p
}

// observe gives the monitor one event; it reports whether the run must
// stop (a violation, unless keepGoing, or a panicking property).
func (p *propertyHook) observe(e *model.Event) (stop bool) {
	if p.monitor == nil || p.harnessErr != nil {
		return false
	}
	defer p.recoverProperty(e, &stop)
	if vs := p.monitor.Observe(e); len(vs) > 0 {
		p.violations = append(p.violations, vs...)
		return !p.keepGoing
	}
	return false
}

// finish asks the monitor for the violations only the end of the run
// shows (liveness); it reports whether a property panicked.
func (p *propertyHook) finish(h *model.History) (stop bool) {
	if p.monitor == nil {
		return false
	}
	defer p.recoverProperty(nil, &stop)
	p.violations = append(p.violations, p.monitor.Finish(h)...)
	return false
}

// addStuck reports the workload's WorkloadStuck finding, when there is one
// and nothing else was found: a stuck controller usually is the reason the
// user gave up, and a property that says why is the better report.
func (p *propertyHook) addStuck(stuck *properties.Violation) {
	if stuck != nil && len(p.violations) == 0 && p.harnessErr == nil {
		p.violations = append(p.violations, *stuck)
	}
}

// hashState adds the monitors' state to a state fingerprint; false when a
// monitor has none (properties.StateHasher), and the state must not be
// merged with another.
func (p *propertyHook) hashState(h hash.Hash64) bool {
	return p.monitor == nil || p.monitor.HashState(h)
}

// fail sets the run's harness error.
func (p *propertyHook) fail(err error) { p.harnessErr = err }

// recoverProperty turns a panicking property (an unknown kind asked of
// properties.State, a broken predicate) into the run's harness error: it
// is the scenario's bug, never the controller's, even when the event that
// triggered it came from a reconcile.
func (p *propertyHook) recoverProperty(e *model.Event, stop *bool) {
	if r := recover(); r != nil {
		at := "at the end of the run"
		if e != nil {
			at = fmt.Sprintf("at step %d (%s)", e.Step, e.Line())
		}
		p.harnessErr = fmt.Errorf("scenario %q: a property panicked %s: %v; fix the property", p.scenario, at, r)
		*stop = true
	}
}
