package simulator

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// workloadDriver is the part of a World that plays the user: it runs the
// scenario's workload steps in order, retries a step whose command fails
// with an error its Retry accepts, waits for its Until condition on ground
// truth, and gives up after the step's Timeout, noting the finding
// WorkloadStuck.
type workloadDriver struct {
	workload []WorkloadStep
	next     int  // index of the next workload step
	waiting  bool // the step before next ran; its Until has not held yet
	// attempting while the current step's Do is retried, from step
	// waitFrom at time waitStart, until retryDeadline; the next attempt
	// not before retryAt.
	attempting    bool
	waitFrom      int
	waitStart     model.Time
	waitDeadline  model.Time
	retryDeadline model.Time
	retryAt       model.Time
	stuck         *properties.Violation // the WorkloadStuck finding, if any
	// faulted: a fault was in force (a paused cache, an informer that
	// lost events) at some moment of the current wait or retries.
	faulted bool

	// untilFailed is the store revision at which Until last failed; until
	// remembers the kinds it read, to ask it again only when they change.
	untilFailed revisionMemo[struct{}]
	until       untilMemo
	runStep     func() // the workload step's Run, built once
}

// done reports whether every workload step ran and its condition held
// (or the user gave up on it).
func (d *workloadDriver) done() bool {
	return d.next >= len(d.workload) && !d.waiting
}

// appendStep appends the next workload step when the user may run it now.
func (d *workloadDriver) appendStep(w *World, buf []Step) []Step {
	if d.waiting || d.next >= len(d.workload) || d.retryAt > w.Clock.Now() {
		return buf
	}
	if d.runStep == nil {
		d.runStep = func() { d.run(w) }
	}
	return append(buf, Step{Actor: model.ActorUser, Class: model.StepWorkload, Label: d.workload[d.next].Name, Run: d.runStep})
}

// timers offers the times the user waits for: the current step's
// deadline, and its next attempt.
func (d *workloadDriver) timers(now model.Time, consider func(model.Time, bool)) {
	if d.waiting {
		consider(d.waitDeadline, true)
	}
	if d.retryAt > now {
		consider(d.retryAt, true)
	}
}

// advance checks the current step's wait condition on ground truth.
func (d *workloadDriver) advance(w *World) {
	if !d.waiting {
		return
	}
	st := &d.workload[d.next-1]
	// Ground truth only changes with the store, and the condition only
	// sees the kinds it read: check again only once one of them changed.
	key := revisionKey(w.Store)
	if w.Clock.Now() < d.waitDeadline {
		if _, failedHere := d.untilFailed.get(key); failedHere || d.until.unchanged() {
			return
		}
	}
	d.untilFailed.set(key, struct{}{})
	if st.Until == nil || st.Until(context.Background(), d.until.reader()) {
		d.waiting = false
		w.record(model.ActorUser, model.OpWorkload, "", "", "", "done: "+st.Name)
		return
	}
	if w.Clock.Now() >= d.waitDeadline {
		d.waiting = false
		w.record(model.ActorUser, model.OpWorkload, "", "", "", "gave up waiting: "+st.Name)
		d.noteStuck(w, st, fmt.Sprintf("the user waited for %q from step %d (t=%s) until t=%s, its Timeout of %s, and its condition never held on the store", st.Name, d.waitFrom, d.waitStart, w.Clock.Now(), st.timeout()))
	}
}

// run runs the next workload step's command once.
func (d *workloadDriver) run(w *World) {
	st := &d.workload[d.next]
	w.record(model.ActorUser, model.OpWorkload, "", "", "", "start: "+st.Name)
	if !d.attempting {
		d.attempting = true
		d.waitFrom, d.waitStart = w.History.Events[len(w.History.Events)-1].Step, w.Clock.Now()
		d.retryDeadline = w.Clock.Now() + st.timeout()
		d.faulted = w.faults.inForce(w)
	}
	err := st.Do(context.Background(), w.ActorClient(model.ActorUser))
	if err != nil {
		if !st.retry(err) {
			w.fail(fmt.Errorf("workload step %q failed: %w (a workload step may fail only with an error its Retry accepts, by default Conflict, AlreadyExists or NotFound; fix the scenario)", st.Name, err))
			return
		}
		if w.Clock.Now() >= d.retryDeadline {
			w.record(model.ActorUser, model.OpWorkload, "", "", "", "gave up retrying: "+st.Name)
			d.noteStuck(w, st, fmt.Sprintf("the user ran %q from step %d (t=%s) until t=%s, its Timeout of %s, and it kept failing: %s: %v", st.Name, d.waitFrom, d.waitStart, w.Clock.Now(), st.timeout(), apierrors.ReasonForError(err), err))
			d.attempting = false
			d.next++
			return
		}
		if !apierrors.IsConflict(err) {
			// Not at the next step: the old object must finish
			// terminating, or a cache catch up, which takes time.
			d.retryAt = w.Clock.Now() + DefaultRetryDelay
		}
		return // retried, as a user re-running kubectl would
	}
	d.attempting = false
	d.next++
	d.waiting = true
	d.untilFailed.forget()
	d.until.reset(w)
	d.waitFrom, d.waitStart = w.History.Events[len(w.History.Events)-1].Step, w.Clock.Now()
	d.waitDeadline = w.Clock.Now() + st.timeout()
	d.faulted = w.faults.inForce(w)
}

// noteFault is called after every fault step: a fault that comes into
// force during the user's wait or retries excuses its give-up (noteStuck).
func (d *workloadDriver) noteFault(w *World) {
	if (d.waiting || d.attempting) && !d.faulted && w.faults.inForce(w) {
		d.faulted = true
	}
}

// stuckFinding is the WorkloadStuck finding noted, or nil.
func (d *workloadDriver) stuckFinding() *properties.Violation { return d.stuck }

// noteStuck notes the finding WorkloadStuck of the step that just gave
// up. It is reported at the end of the run, and only when no property
// found anything: a stuck controller usually is the reason the wait gave
// up, and the property that says why is the better report.
//
// A give-up is no finding when a fault was in force at any moment of the
// wait (or of the retries): a paused cache stays paused, and an informer
// that lost an event stays wrong until it relists, until the faults end,
// which the workload's end starts; so the controller cannot be expected to
// converge in the meantime, nor in whatever is left of the Timeout once
// the fault ends (the history still records the give-up, and
// EventuallyConverges judges the end). A crash or an eviction is no such
// fault: it is over once it struck, and a controller that never recovers
// from it is what the finding is for. (Before, only a fault still in force
// at the give-up excused it: zookeeper/fixed's staleness guard, refusing
// for 587 s to act on a paused cache that resumed 12 s before the give-up,
// was reported stuck; random seed 1 at the nightly budget.)
func (d *workloadDriver) noteStuck(w *World, st *WorkloadStep, why string) {
	if d.stuck != nil || d.faulted || w.faults.inForce(w) {
		return
	}
	last := &w.History.Events[len(w.History.Events)-1]
	d.stuck = &properties.Violation{
		Property:    WorkloadStuck,
		Statement:   "every workload step's command succeeds and its condition holds within the step's Timeout",
		Step:        last.Step,
		Event:       *last,
		Explanation: why + "; the user gave up at step " + strconv.Itoa(last.Step) + " and went on with the workload.",
		Related:     []int{d.waitFrom},
	}
}

// hashState adds the user's position to a state fingerprint: the step,
// the time left to wait or retry, and a pending WorkloadStuck.
func (d *workloadDriver) hashState(now model.Time, f *fingerprint) {
	f.put(uint64(d.next))
	if d.waiting {
		f.put(uint64(d.waitDeadline - now))
	}
	if d.attempting {
		// A workload step being retried: its deadline and next attempt.
		f.put(uint64(d.retryDeadline - now))
		f.put(uint64(max(0, d.retryAt-now)))
	}
	if d.stuck != nil {
		f.put(0x57) // a WorkloadStuck finding is pending
	}
	if d.faulted {
		f.put(0xfa) // the current wait is excused
	}
}
