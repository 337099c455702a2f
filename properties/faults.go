package properties

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/model"
)

// faultLog remembers, for the explanation of a liveness verdict, the
// faults of a run and what each one struck: a crash names the API call of
// the reconcile it interrupted, a paused cache its revision, a dropped
// event its object, and the controllers' stale reads are counted with the
// latest one described. It only shapes explanations, never a verdict, so
// no monitor fingerprints it.
type faultLog struct {
	faults   []string // "step N: ...", in order
	inflight map[model.Actor]*reconcileSoFar
	stale    int        // stale reads by controllers
	last     *staleRead // the latest of them
}

// reconcileSoFar is a controller's reconcile in flight: its request, the
// step it began at, and its latest API call.
type reconcileSoFar struct {
	// start is the ReconcileStart event's request (its kind, namespace
	// and name), rendered only if a crash explains it.
	start  model.Event
	step   int
	calls  int
	active bool // between the reconcile's start and its end (the struct is reused)
	// lastCall is the reconcile's latest API call, kept as the event's
	// fields and rendered ("Update StatefulSet default/zk at step 57")
	// only if a crash explains it: every controller call passes here.
	lastCall model.Event
}

// lastCallLine renders the reconcile's latest API call.
func (r *reconcileSoFar) lastCallLine() string {
	e := &r.lastCall
	return fmt.Sprintf("%s %s at step %d", e.Op, strings.TrimSpace(e.Kind+" "+e.Key()), e.Step)
}

func (f *faultLog) observe(s *State, e *model.Event) {
	switch {
	case e.Op == model.OpReconcile && IsController(e.Actor):
		if f.inflight == nil {
			f.inflight = map[model.Actor]*reconcileSoFar{}
		}
		r := f.inflight[e.Actor]
		if r == nil {
			r = &reconcileSoFar{}
			f.inflight[e.Actor] = r
		}
		// Field by field, as lastCall below: the start's other fields
		// stay zero, lastCall is read only once calls > 0 (every call
		// sets it whole), and zeroing two Events at every reconcile
		// showed in profiles.
		r.start.Kind, r.start.Namespace, r.start.Name = e.Kind, e.Namespace, e.Name
		r.step, r.calls, r.active = e.Step, 0, true
	case (e.Op == model.OpReconcileDone || e.Op == model.OpPanic) && IsController(e.Actor):
		if r := f.inflight[e.Actor]; r != nil {
			r.active = false
		}
	case (e.Op.IsRead() || e.Op.IsWrite()) && IsController(e.Actor):
		if r := f.inflight[e.Actor]; r != nil && r.active {
			r.calls++
			// Field by field: the other fields stay zero, and copying a
			// whole Event at every controller call showed in profiles.
			c := &r.lastCall
			c.Op, c.Kind, c.Namespace, c.Name, c.Step = e.Op, e.Kind, e.Namespace, e.Name, e.Step
		}
		if e.Stale && e.Op.IsRead() {
			f.stale++
			if f.last == nil {
				f.last = &staleRead{}
			}
			f.last.set(s, e)
		}
	case e.Op == model.OpCrash:
		who := model.Actor(e.Name)
		line := fmt.Sprintf("step %d: crash of %s", e.Step, who)
		if r := f.inflight[who]; r != nil && r.active {
			line += fmt.Sprintf(" in its reconcile of %s begun at step %d", requestKey(&r.start), r.step)
			if r.calls > 0 {
				line += fmt.Sprintf(", after API call %d (%s)", r.calls, r.lastCallLine())
			} else {
				line += ", before its first API call"
			}
		} else {
			line += " between reconciles"
		}
		if r := f.inflight[who]; r != nil {
			r.active = false
		}
		f.faults = append(f.faults, line)
	case e.Op == model.OpRestart:
		f.faults = append(f.faults, fmt.Sprintf("step %d: %s restarted against %s", e.Step, e.Name, e.Detail))
	case e.Op == model.OpPauseCache:
		f.faults = append(f.faults, fmt.Sprintf("step %d: the %s watch cache of %s paused at revision %d (store at %d)", e.Step, e.Kind, apiserverName(e.Server), e.ReadRev, e.HeadRev))
	case e.Op == model.OpResumeCache:
		f.faults = append(f.faults, fmt.Sprintf("step %d: the %s watch cache of %s resumed", e.Step, e.Kind, e.Detail))
	case e.Op == model.OpDropEvent:
		f.faults = append(f.faults, fmt.Sprintf("step %d: dropped the watch event of %s %s at rev %d (%s)", e.Step, e.Kind, e.Key(), e.Rev, e.Detail))
	case e.Op == model.OpEvict:
		f.faults = append(f.faults, fmt.Sprintf("step %d: evicted Pod %s", e.Step, e.Key()))
	}
}

// explain is the faults paragraph: every fault with its step, then the
// stale reads.
func (f *faultLog) explain() string {
	var b strings.Builder
	if len(f.faults) == 0 {
		b.WriteString("Faults injected: none.")
	} else {
		b.WriteString("Faults injected (" + strconv.Itoa(len(f.faults)) + "):")
		for _, l := range f.faults {
			b.WriteString("\n  " + l)
		}
	}
	if f.stale > 0 {
		fmt.Fprintf(&b, "\nStale reads by controllers: %d; the latest at %s.", f.stale, f.last.describe())
	}
	return b.String()
}

// related are the steps of the faults and of the latest stale read.
func (f *faultLog) related() []int {
	var steps []int
	for _, l := range f.faults {
		n, _ := strconv.Atoi(strings.TrimPrefix(l[:strings.IndexByte(l, ':')], "step "))
		steps = append(steps, n)
	}
	if f.last != nil {
		steps = append(steps, f.last.step)
	}
	return steps
}

// sortedSteps sorts steps, drops repeats and any step after last.
func sortedSteps(steps []int, last int) []int {
	slices.Sort(steps)
	out := steps[:0]
	for i, s := range steps {
		if s > 0 && s <= last && (i == 0 || s != steps[i-1]) {
			out = append(out, s)
		}
	}
	return out
}
