package properties

import (
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/model"
)

// Kind says how a property is judged.
type Kind int

const (
	// Safety properties are broken at one event: something bad happened.
	// Their monitors usually report from Observe (Linearizable, which
	// needs the whole history, reports from Finish).
	Safety Kind = iota
	// Liveness properties are judged at the end of a history: something
	// good never happened. Their monitors report from Finish.
	Liveness
)

func (k Kind) String() string {
	switch k {
	case Safety:
		return "safety"
	case Liveness:
		return "liveness"
	}
	return "kind" + strconv.Itoa(int(k))
}

// Property is one guarantee a history must keep. It is plain data: a name, a
// one-line statement, and a factory of online checkers.
type Property struct {
	// Name identifies the property in reports, e.g.
	// "NoDeleteOfLive(member PVC)".
	Name string
	// Statement is the guarantee, in one line.
	Statement string
	Kind      Kind
	// NewMonitor returns a fresh checker for one history. Monitors keep
	// per-history state and are never shared between histories.
	NewMonitor func() Monitor
}

// Monitor checks one history online.
type Monitor interface {
	// Observe is called for every event, in order, with the ground truth
	// as it was BEFORE the event's change (if any) was applied: a
	// judgement "at the revision the request was made against" reads s.
	// The state after the event is s plus e.Object. It returns a
	// violation at the first event that breaks the guarantee, else nil.
	// s is only valid during the call: it keeps changing afterwards.
	Observe(s *State, e *model.Event) *Violation
	// Finish is called once, at the end of the history, with the final
	// ground truth and the whole history. Liveness properties judge here;
	// a safety monitor usually returns nil.
	Finish(final *State, h *model.History) *Violation
}

// Violation is a property broken by a history, with the evidence.
type Violation struct {
	Property  string
	Statement string
	// Step is the step of the offending event; for a liveness property,
	// the step of the last event of the history.
	Step int
	// Event is the offending event (for liveness, the last one). Its
	// Object may be nil.
	Event model.Event
	// Explanation is human text, possibly multi-line: what happened, why
	// it breaks the guarantee, with the numbers.
	Explanation string
	// Related lists the steps of other events the verdict depends on
	// (the stale read behind a delete, the earlier failures of a stuck
	// reconcile, the Settle event, the other stale reads), in increasing
	// order.
	Related []int
}

// String renders the violation for a report:
//
//	NoReconcilePanic: a reconcile never panics
//	  at step 12: controller/zk Panic -> ok t=3s #12
//	  <explanation, indented>
//	  related steps: 4, 9
func (v *Violation) String() string {
	var b strings.Builder
	b.WriteString(v.Property)
	if v.Statement != "" {
		b.WriteString(": ")
		b.WriteString(v.Statement)
	}
	b.WriteString("\n  at step ")
	b.WriteString(strconv.Itoa(v.Step))
	if v.Event.Step != 0 || v.Event.Op != "" {
		b.WriteString(": ")
		b.WriteString(v.Event.Line())
	}
	for _, line := range strings.Split(strings.TrimRight(v.Explanation, "\n"), "\n") {
		if line == "" {
			continue
		}
		b.WriteString("\n  ")
		b.WriteString(line)
	}
	if len(v.Related) > 0 {
		b.WriteString("\n  related steps: ")
		for i, s := range v.Related {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(s))
		}
	}
	return b.String()
}

// Run checks properties online over one history. Feed it every event in
// order with Observe, then call Finish once.
//
//	r := NewRun(props...)
//	for i := range h.Events {
//		for _, v := range r.Observe(&h.Events[i]) { ... }
//	}
//	for _, v := range r.Finish(h) { ... }
//
// Each property reports at most one violation: after its first, its monitor
// is no longer consulted.
type Run struct {
	props    []Property
	monitors []Monitor
	found    []*Violation // per property, nil until violated
	state    *State
	finished bool
}

// NewRun starts checking props against a fresh, empty store.
func NewRun(props ...Property) *Run {
	r := &Run{
		props:    props,
		monitors: make([]Monitor, len(props)),
		found:    make([]*Violation, len(props)),
		state:    NewState(),
	}
	for i, p := range props {
		r.monitors[i] = p.NewMonitor()
	}
	return r
}

// Observe shows e to every monitor not yet violated, with the state before
// e, then applies e to the state. It returns the violations e caused, in
// property order (nil for none).
func (r *Run) Observe(e *model.Event) []Violation {
	var out []Violation
	for i, m := range r.monitors {
		if r.found[i] != nil {
			continue
		}
		if v := m.Observe(r.state, e); v != nil {
			out = append(out, *r.record(i, v))
		}
	}
	r.state.Apply(e)
	return out
}

// Finish ends the history: every monitor not yet violated judges the final
// state. It returns the violations found now, in property order. Calling
// Finish twice returns nil the second time.
func (r *Run) Finish(h *model.History) []Violation {
	if r.finished {
		return nil
	}
	r.finished = true
	var out []Violation
	for i, m := range r.monitors {
		if r.found[i] != nil {
			continue
		}
		if v := m.Finish(r.state, h); v != nil {
			out = append(out, *r.record(i, v))
		}
	}
	return out
}

// record fills the property's name and statement into v and keeps it.
func (r *Run) record(i int, v *Violation) *Violation {
	if v.Property == "" {
		v.Property = r.props[i].Name
	}
	if v.Statement == "" {
		v.Statement = r.props[i].Statement
	}
	r.found[i] = v
	return v
}

// Violations returns every violation found so far, at most one per property,
// in property order.
func (r *Run) Violations() []Violation {
	var out []Violation
	for _, v := range r.found {
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// State is the ground truth after the events observed so far. It is the
// run's own state: read it, do not Apply to it.
func (r *Run) State() *State { return r.state }

// Check runs props over a finished history and returns the violations, at
// most one per property, in property order.
func Check(h *model.History, props ...Property) []Violation {
	r := NewRun(props...)
	for i := range h.Events {
		r.Observe(&h.Events[i])
	}
	r.Finish(h)
	return r.Violations()
}
