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
	// podsTouched: the pods (namespace/name) that a step read (a Get of
	// it, a List that returned it) or wrote, whoever took it.
	podsTouched []string
	// allPodsTouched: a step may have depended on any pod: a pod event
	// that names none (a failed List, a DeleteAllOf), or a write by an
	// actor that decides from reads the history does not record
	// (readsUnrecorded).
	allPodsTouched bool
	// kindsWritten: the kinds anyone wrote.
	kindsWritten map[string]bool
	// clockMoved: the simulated clock advanced (model.OpTick).
	clockMoved bool
	// ignoreTicks (Options.ignoreTicks, tests only) leaves
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
		}
		// A delivered watch event is no read for the eviction rule
		// (independent, below).
		if e.Kind == "Pod" && e.Op != model.OpDeliver {
			if e.Op == model.OpList && e.Err == "" {
				// A list depends on the pods it returned: a running pod
				// it left out did not match, or was not yet in the cache
				// that served it, and its eviction changes neither.
				for _, v := range e.Versions {
					m.podsTouched = append(m.podsTouched, v.Name)
				}
			} else if e.Name == "" {
				m.allPodsTouched = true
			} else {
				m.podsTouched = append(m.podsTouched, e.Namespace+"/"+e.Name)
			}
		}
		if e.Change != model.ChangeNone {
			if readsUnrecorded(e.Actor) {
				m.allPodsTouched = true
			}
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
	return m.first || m.controllerWrote || m.workloadStepEnded || m.clockMoved || len(m.kindsWritten) > 0
}

// evictionDependent reports whether one of the enabled evictions depends
// on the steps, which any() does not see: they read a pod and wrote
// nothing. The search then makes the decision a fault decision; a budget
// without evictions (or with them spent) keeps its decisions.
func (m *stepMarks) evictionDependent(steps []model.Option) bool {
	if !m.allPodsTouched && len(m.podsTouched) == 0 {
		return false
	}
	for i := range steps {
		if steps[i].Fault == model.FaultEvict && !m.independent(&steps[i]) {
			return true
		}
	}
	return false
}

// touched reports whether the steps may have depended on pod
// namespace/name, or changed it.
func (m *stepMarks) touched(namespace, name string) bool {
	if m.allPodsTouched {
		return true
	}
	for _, p := range m.podsTouched {
		if len(p) == len(namespace)+1+len(name) && p[:len(namespace)] == namespace && p[len(namespace)] == '/' && p[len(namespace)+1:] == name {
			return true
		}
	}
	return false
}

// reset starts the marks of the next decision.
func (m *stepMarks) reset() {
	m.first = false
	m.controllerWrote, m.workloadStepEnded, m.clockMoved = false, false, false
	m.podsTouched, m.allPodsTouched = m.podsTouched[:0], false
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
//   - Evict (delete running pod P from outside): offered again after a
//     step that read P (a Get of it, a List that returned it: after the
//     eviction the read sees P gone or terminating, since the default
//     schedule delivers the eviction's watch events before anything
//     else), wrote P (whoever did: two writes of one object), was taken
//     by an actor that decides from reads the history does not record
//     (readsUnrecorded: the StatefulSet controller decides from every pod
//     of its set, PVC protection from the pods that mount a claim), ended
//     a workload step (its wait condition reads ground truth), or moved
//     the clock (the pod's deletionTimestamp, and the end of its grace
//     period, count from the eviction). Steps that commute with it: reads
//     and writes of other objects by a controller under test or the
//     workload (its writes follow from reads it already made, and a List
//     that did not return P would not have returned it after the
//     eviction either), and the delivery of a watch event already queued
//     (the eviction's own events queue behind it). Up to commit 72bffb5
//     this rule offered an eviction only after a controller's pod or PVC
//     write or a workload step's end, a bound: TestFinalStateAudit found
//     kuberay/scale reaching 14 of its 24 final states with one eviction,
//     zookeeper/fixed 5 of 11.
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
		return !m.touched(f.Namespace, f.Name) && !m.workloadStepEnded && !m.clockMoved
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

// readsUnrecorded reports whether actor a may decide its writes from reads
// the history does not record (World.Peek): the built-in controllers and
// external systems. Not the controllers under test and the user's
// workload (both read through a client that records every read), the
// fault injector, or the kubelet and the scheduler (recorded as the
// kubelet), whose steps each read the one pod they write and its claims.
func readsUnrecorded(a model.Actor) bool {
	switch a {
	case model.ActorKubelet, model.ActorUser, model.ActorFault:
		return false
	}
	return !properties.IsController(a)
}
