package explore

import (
	"strings"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// This file is the exhaustive search's partial-order reduction: the
// independence relation between a fault and the default steps around it,
// in one place. See docs/explore.md, "Reduction".
//
// The search follows the default schedule and, at each decision, may take
// an enabled fault instead of the default step. Offering fault f at
// decision d and again at d+1 explores both f·t and t·f, where t is the
// default step (or steps: deliveries and environment steps between two
// decisions are all summarised) taken at d. When t and f are independent,
// both orders lead to states that the rest of the search cannot tell
// apart, so f is offered at d only, and again only after a step that does
// not commute with it. The search keeps, per decision, what the steps
// since the previous decision did (stepMarks, from the events they
// recorded) and asks independent for each enabled fault.
//
// Options.NoReduce turns the relation off: every enabled fault is offered
// at every decision (within the fault budget). TestReductionKeepsEveryViolation
// compares both searches.

// stepMarks is what the steps since the previous decision did, as far as
// the independence relation cares.
type stepMarks struct {
	// first: no decision was taken yet.
	first bool
	// controllerWrote: a controller under test wrote (created, updated,
	// patched, deleted) an object or called an external system.
	controllerWrote bool
	// workloadStepEnded: a step of the user's workload finished.
	workloadStepEnded bool
	// storageWritten: a controller under test wrote a pod or a PVC.
	storageWritten bool
	// kindsWritten: the kinds anyone wrote.
	kindsWritten map[string]bool
	// clockMoved: the simulated clock advanced (model.OpTick).
	clockMoved bool
	// ignoreTicks (Options.crashIgnoresTicks, tests only) leaves
	// clockMoved unset.
	ignoreTicks bool
}

// scan adds the events recorded since the previous decision.
func (m *stepMarks) scan(since []model.Event) {
	for i := range since {
		e := &since[i]
		switch {
		case e.Op == model.OpWorkload && strings.HasPrefix(e.Detail, "done:"):
			m.workloadStepEnded = true
		case e.Op == model.OpTick && !m.ignoreTicks:
			m.clockMoved = true
		case properties.IsController(e.Actor) && (e.Change != model.ChangeNone || e.Op == model.OpExternal):
			m.controllerWrote = true
			if e.Kind == "Pod" || e.Kind == "PersistentVolumeClaim" {
				m.storageWritten = true
			}
		}
		if e.Change != model.ChangeNone {
			if m.kindsWritten == nil {
				m.kindsWritten = map[string]bool{}
			}
			m.kindsWritten[e.Kind] = true
		}
	}
}

// any reports whether any fault could be dependent on the steps: at a
// decision where nothing is marked, every fault is independent of what
// happened since the previous decision, and the decision is no fault
// decision at all.
func (m *stepMarks) any() bool {
	return m.first || m.controllerWrote || m.workloadStepEnded || m.storageWritten || m.clockMoved || len(m.kindsWritten) > 0
}

// reset starts the marks of the next decision.
func (m *stepMarks) reset() {
	m.first = false
	m.controllerWrote, m.workloadStepEnded, m.storageWritten, m.clockMoved = false, false, false, false
	clear(m.kindsWritten)
}

// independent reports whether the steps summarised by m (those taken since
// the previous decision) are independent of fault f: taking f now leads
// where taking f at the previous decision, before them, led. The search
// then does not offer f here. The argument, per fault kind:
//
//   - Crash (restart of a controller under test): between two decisions at
//     which the controller neither wrote nor called an external system, and
//     no workload step ended, its steps only read (it received watch
//     events, reconciled without writing). A crash discards everything it
//     read: the restarted controller lists its informers afresh from its
//     apiserver and starts with an empty queue, so the crash before those
//     reads and after them restart the same controller on the same
//     objects. The end of a workload step is marked too, because the
//     workload's position is part of what the restart sees, and so is a
//     tick of the clock, because the restarted controller's timers (its
//     resync period, a RequeueAfter) count from the time it restarts: a
//     crash just before a tick and one just after restart the same
//     controller on the same objects, but its timers fire a tick apart.
//     (TestFinalStateAudit found that gap: without the tick mark,
//     kuberay/scale reached 35 of its 79 final states.) Steps of other
//     actors (built-in controllers, external systems) in between are
//     treated as commuting with the crash: the restarted controller lists
//     what they wrote either way, or receives it as a watch event. That is
//     the part of this case that is a bound rather than a proof;
//     TestReductionKeepsEveryViolation checks it against the full search.
//   - Stale (pause a watch cache of kind K), Drop (drop the next watch
//     event of kind K) and Expire (410 Gone on a watch of kind K): a cache
//     of kind K and the event stream of kind K only change when an object
//     of kind K is written. Between two such writes, pausing the cache
//     freezes the same content, the next event to drop is the same event,
//     and an expiry relists the same objects.
//   - Evict (delete a pod from outside): offered after a controller under
//     test wrote a pod or a PVC, or a workload step ended. This one is a
//     bound, not a proof: an eviction does not commute with the steps that
//     read the pod (the controller reacts to what it sees), so evictions at
//     other moments are left to the sampling strategies.
//   - Any fault but a crash at the first decision: nothing was taken
//     before it. A crash there (when the controller has not written yet)
//     restarts a controller that has only read into the state it is in,
//     with one crash less left: a schedule without that crash already
//     covers it.
//
// A fault kind not listed above is never treated as independent.
func (m *stepMarks) independent(f *model.Option) bool {
	if m.first && f.Fault != model.FaultCrash {
		return false
	}
	switch f.Fault {
	case model.FaultStale, model.FaultDrop, model.FaultExpire:
		return !m.kindsWritten[f.Kind]
	case model.FaultEvict:
		return !m.storageWritten && !m.workloadStepEnded
	case model.FaultCrash:
		return !m.controllerWrote && !m.workloadStepEnded && !m.clockMoved
	default:
		return false
	}
}

// unobserved reports whether fault f changes nothing anyone sees before
// the faults end (model.Option.Unobserved, which the world sets): a pause
// of a watch cache on an apiserver that no controller is bound to and no
// client reads the caches of, with no crash left to restart a controller
// there. Every step after it reads what it would have read without it, and
// the settle phase resumes the cache, so the schedule without the pause
// (which also keeps that stale budget for later) covers it. What differs
// is the fault's own events (the pause and the resume) and the faults'
// being in force, which only excuses a stuck reconcile
// (properties.NoStuckReconcile): a property that judged those events
// themselves would see fewer of them.
func unobserved(f *model.Option) bool {
	return f.Fault == model.FaultStale && f.Unobserved
}

// strands reports whether fault f is a crash that strands a pause nothing
// saw (model.Option.StrandsPause, which the world sets): after the last
// crash of the budget, a watch cache that is paused and has not fallen
// behind the store while anything could read it is on an apiserver that
// no controller is bound to and no client reads. The crash moved the only
// controller bound there away, or the cache was paused where nobody was
// bound and the crash that could have moved a controller there restarts
// it elsewhere. The pause changed nothing anyone read before the crash
// (the cache served the head), and nothing reads the cache after it until
// the settle phase resumes it. So the schedule without that pause and with
// the same crash reaches every state this one does but the fault's own
// events, with a stale fault more to spend; an unobserved pause is the
// same argument made at the pause (unobserved). Crashes strand many
// pauses: the stale budget is spent right after a write, a crash after
// the next write, and most such pairs leave the pause unread.
// TestStrandingCrashesKeepEveryViolation compares the search with and
// without this rule.
func strands(f *model.Option) bool {
	return f.Fault == model.FaultCrash && f.StrandsPause
}

// symmetric reports whether fault f is the mirror image of another fault
// enabled at the same decision, which the search offers instead: with no
// watch cache paused every apiserver serves the head of the store, so a
// restart on apiserver N leads to the state a restart on apiserver 1 leads
// to, except for the apiserver the controller is bound to, which decides
// nothing while no cache is paused (the search offers the restart on every
// apiserver once a cache is paused, when it does decide something).
//
// The server number is part of the state fingerprint, so two restarts
// that only differ in it are not merged by state pruning: this reduction
// is what saves them.
func symmetric(f *model.Option, cachePaused bool) bool {
	return f.Fault == model.FaultCrash && !cachePaused && f.Server != 1
}
