package properties

import (
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

// IsController reports whether a is a controller under test, an actor named
// "controller/<name>" (see model.ControllerActor).
func IsController(a model.Actor) bool { return a.IsController() }

// monitorFuncs adapts two functions to Monitor; a nil function reports
// nothing.
type monitorFuncs struct {
	observe func(s *State, e *model.Event) *Violation
	finish  func(s *State, h *model.History) *Violation
}

func (m monitorFuncs) Observe(s *State, e *model.Event) *Violation {
	if m.observe == nil {
		return nil
	}
	return m.observe(s, e)
}

func (m monitorFuncs) Finish(s *State, h *model.History) *Violation {
	if m.finish == nil {
		return nil
	}
	return m.finish(s, h)
}

// Observer builds a Monitor from its Observe function alone: the common case
// of a safety property. A nil finish is allowed in MonitorFuncs too. The
// monitor has no state fingerprint, so the exhaustive search does not
// prune while it runs: wrap it with Fingerprinted to say what state it
// keeps (nil when none).
func Observer(observe func(s *State, e *model.Event) *Violation) Monitor {
	return monitorFuncs{observe: observe}
}

// MonitorFuncs builds a Monitor from two functions; either may be nil.
func MonitorFuncs(observe func(s *State, e *model.Event) *Violation, finish func(s *State, h *model.History) *Violation) Monitor {
	return monitorFuncs{observe: observe, finish: finish}
}

// describe renders "Kind namespace/name (rv=N)" for an object.
func describe(kind, namespace, name string, obj runtime.Object) string {
	s := kind + " " + ObjectKey(namespace, name)
	if obj != nil {
		if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() != "" {
			s += " (rv=" + m.GetResourceVersion() + ")"
		}
	}
	return s
}

func apiserverName(server int) string {
	if server <= 0 {
		return "no apiserver"
	}
	return string(model.APIServerActor(server))
}

// staleRead is what NoDeleteOfLive remembers of a controller's latest stale
// read.
type staleRead struct {
	step      int
	op        model.Op
	kind      string // what the read asked for (see what)
	namespace string
	name      string
	server    int
	readRev   model.Revision
	headRev   model.Revision
	gotRev    model.Revision // for a Get: the resourceVersion returned
	storeRev  string         // for a Get: the resourceVersion the store held, "" if absent
	storeHeld bool
	versions  int    // for a List: how many objects it returned
	err       string // the read's error, if any
}

// newStaleRead remembers the stale read e, with what the store held then.
func newStaleRead(s *State, e *model.Event) *staleRead {
	r := &staleRead{}
	r.set(s, e)
	return r
}

// set makes r the stale read e, with what the store held then ("what" is
// rendered by describe: most stale reads are never described).
func (r *staleRead) set(s *State, e *model.Event) {
	*r = staleRead{step: e.Step, op: e.Op, server: e.Server, readRev: e.ReadRev, headRev: e.HeadRev, gotRev: e.Rev, versions: len(e.Versions), err: e.Err,
		kind: e.Kind, namespace: e.Namespace, name: e.Name}
	if e.Op == model.OpGet {
		if obj, ok := s.get(e.Kind, e.Namespace, e.Name); ok {
			r.storeHeld = true
			if m, err := meta.Accessor(obj); err == nil {
				r.storeRev = m.GetResourceVersion()
			}
		}
	}
}

// what names what the read asked for: "Kind namespace/name" for a Get,
// "Kind" or "Kind in namespace ns" for a List.
func (r *staleRead) what() string {
	if r.op == model.OpGet {
		e := model.Event{Namespace: r.namespace, Name: r.name}
		return r.kind + " " + e.Key()
	}
	if r.namespace != "" {
		return r.kind + " in namespace " + r.namespace
	}
	return r.kind
}

func (r *staleRead) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d: %s %s, served by %s from a watch cache at revision %d while the store head was at revision %d",
		r.step, r.op, r.what(), apiserverName(r.server), r.readRev, r.headRev)
	switch {
	case r.err != "":
		fmt.Fprintf(&b, "; it failed with %q", r.err)
		if r.op == model.OpGet && r.storeHeld {
			fmt.Fprintf(&b, " while the store held rv=%s", r.storeRev)
		}
	case r.op == model.OpGet:
		fmt.Fprintf(&b, "; it returned rv=%d", r.gotRev)
		if r.storeHeld {
			fmt.Fprintf(&b, ", the store held rv=%s", r.storeRev)
		} else {
			b.WriteString(", the store no longer held the object")
		}
	case r.op == model.OpList:
		fmt.Fprintf(&b, "; it returned %d object(s)", r.versions)
	}
	return b.String()
}

// NoDeleteOfLive is the safety property "a controller never deletes a live
// object".
//
// The monitor flags the first event that
//   - is a Delete or DeleteAllOf,
//   - by a controller under test (IsController),
//   - that succeeded (Err == ""),
//   - of an object (the one stored under the event's Kind/Namespace/Name in
//     the state before the delete, or else the event's Object) for which
//     match returns true,
//   - and that isLive in the state before the delete (the state the delete
//     was made against).
//
// The explanation carries isLive's why and, if the same controller made a
// stale read (a Get or List with Stale set) before the delete, the most
// recent one: its step, the revision of the cache that served it, the store
// head at that time and, for a Get, the resourceVersion it returned against
// the one the store held. That read's step is in Related.
//
// A DeleteAllOf is judged on the object its event names; the simulator
// records one event per object such a call deletes. A DeleteAllOf event
// naming no object (no Name and no Object) is not judged. Deletes that set a
// deletionTimestamp (objects with finalizers, pods in graceful deletion)
// count as deletes: the decision to delete was made. A delete of an object
// that already has a deletionTimestamp is not judged: it repeats a decision
// already made (and judged), changing nothing or only shortening a pod's
// grace period.
func NoDeleteOfLive(name string, match func(obj runtime.Object) bool, isLive func(s *State, obj runtime.Object) (live bool, why string)) Property {
	return Property{
		Name:      name,
		Statement: "a controller never deletes an object that is live at the revision of the delete",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			// last only shapes the explanation: the verdict is a function
			// of the state and the delete, so the fingerprint is empty.
			// Its stale reads are never changed once stored: a fork
			// copies the map alone.
			last := make(map[model.Actor]*staleRead)
			return statefulMonitor[map[model.Actor]*staleRead]{st: &last, clone: func(last *map[model.Actor]*staleRead) map[model.Actor]*staleRead { return maps.Clone(*last) }, observe: func(lastp *map[model.Actor]*staleRead, s *State, e *model.Event) *Violation {
				last := *lastp
				if e.Op.IsRead() && e.Stale && IsController(e.Actor) {
					last[e.Actor] = newStaleRead(s, e)
					return nil
				}
				if (e.Op != model.OpDelete && e.Op != model.OpDeleteAllOf) || e.Err != "" || !IsController(e.Actor) {
					return nil
				}
				obj, ok := s.get(e.Kind, e.Namespace, e.Name)
				if !ok {
					if e.Change == model.ChangeNone {
						return nil // deleted nothing
					}
					obj = e.Object
				}
				if obj == nil || !match(obj) {
					return nil
				}
				if m, err := meta.Accessor(obj); err == nil && m.GetDeletionTimestamp() != nil {
					// Already terminating: the delete that set the
					// deletionTimestamp was the decision (and was judged);
					// a repeat changes nothing, or only shortens a grace
					// period.
					return nil
				}
				live, why := isLive(s, obj)
				if !live {
					return nil
				}
				var b strings.Builder
				fmt.Fprintf(&b, "%s deleted %s at step %d, against store revision %d.\n",
					e.Actor, describe(e.Kind, e.Namespace, e.Name, obj), e.Step, s.Revision())
				fmt.Fprintf(&b, "It was live at that revision: %s.\n", strings.TrimSuffix(why, "."))
				v := &Violation{Step: e.Step, Event: *e}
				if r := last[e.Actor]; r != nil {
					fmt.Fprintf(&b, "The latest stale read by %s before the delete was at %s.", e.Actor, r.describe())
					v.Related = []int{r.step}
				} else {
					fmt.Fprintf(&b, "No stale read by %s precedes the delete.", e.Actor)
				}
				v.Explanation = b.String()
				return v
			}}
		},
	}
}

// replicasOf returns spec.replicas with the API default (1) for nil.
func replicasOf(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

// NoScaleBelow is the safety property "a controller never scales a
// StatefulSet down below the desired size".
//
// The monitor flags the first event that
//   - is an Update or Patch of a StatefulSet (Kind "StatefulSet", Object a
//     *appsv1.StatefulSet),
//   - by a controller under test, that succeeded (Err == "") and carries
//     the written object,
//   - whose written spec.replicas (nil counts as 1) is lower than before the
//     write (or the StatefulSet did not exist in the state before),
//   - and is below min, where min, ok, why = desired(s, written) is judged
//     on the state s before the write. ok == false means "no opinion" (for
//     example the owner is gone) and is never a violation.
//
// Writes that raise replicas, or leave them unchanged, are not scale-downs
// even while still below min: a controller that moves replicas one step at a
// time toward the desired size is not flagged. Create is not judged.
func NoScaleBelow(name string, desired func(s *State, sts *appsv1.StatefulSet) (min int32, ok bool, why string)) Property {
	return Property{
		Name:      name,
		Statement: "a controller never lowers a StatefulSet's spec.replicas below the desired size at the revision of the write",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			return statelessMonitor{monitorFuncs{observe: func(s *State, e *model.Event) *Violation {
				if (e.Op != model.OpUpdate && e.Op != model.OpPatch) || e.Err != "" || !IsController(e.Actor) || e.Kind != "StatefulSet" {
					return nil
				}
				sts, ok := e.Object.(*appsv1.StatefulSet)
				if !ok || sts == nil {
					return nil
				}
				now := replicasOf(sts)
				before := "did not exist"
				if old, ok := s.get(e.Kind, e.Namespace, e.Name); ok {
					if o, ok := old.(*appsv1.StatefulSet); ok {
						prev := replicasOf(o)
						if now >= prev {
							return nil
						}
						before = "had spec.replicas=" + strconv.Itoa(int(prev))
					}
				}
				min, ok, why := desired(s, sts)
				if !ok || now >= min {
					return nil
				}
				return &Violation{
					Step:  e.Step,
					Event: *e,
					Explanation: fmt.Sprintf("%s wrote StatefulSet %s with spec.replicas=%d at step %d (committed at revision %d); before the write it %s.\n"+
						"At store revision %d the desired size was %d: %s.",
						e.Actor, e.Key(), now, e.Step, e.Rev, before, s.Revision(), min, strings.TrimSuffix(why, ".")),
				}
			}}}
		},
	}
}

// EventuallyConverges is the liveness property "after the faults stop, the
// system converges": once the Settle event has happened, pred must become
// true and stay true to the end of the history.
//
// On a finite history this is judged at Finish: the property is violated
// when pred is false on the final state. The explanation names the Settle
// step, how many steps and how much logical time passed since, whether the
// run ended Quiescent (nothing left to do) or hit its step bound, pred's why
// on the final state, the last step after which pred held (and whether
// that was before or after Settle; before Settle pred is checked at each
// workload event and each fault only), and the faults of the run, each with
// its step: which crash, at which API call of which reconcile; which cache
// paused, at which revision; which watch event was dropped; which pod was
// evicted; and the controllers' latest stale read.
//
// pred is evaluated at those checkpoints and after Settle each time the
// state changes, so it must depend on the state only. A history without a Settle event gets no verdict (Finish
// returns nil): the workload or faults never stopped, so convergence cannot
// be demanded.
func EventuallyConverges(name string, pred func(s *State) (ok bool, why string)) Property {
	return Property{
		Name:      name,
		Statement: "after the workload and faults stop, the state eventually satisfies the predicate and keeps satisfying it",
		Kind:      Liveness,
		NewMonitor: func() Monitor {
			// Only settled decides a verdict (with the final state); the
			// rest shapes the explanation. Every field is a value: a fork
			// copies the struct.
			return statefulMonitor[convergence]{st: &convergence{}, observe: func(c *convergence, s *State, e *model.Event) *Violation {
				s.faultLog(e) // fed at every event, read at Finish
				if e.Op == model.OpSettle && !c.settled {
					c.settled, c.settle = true, *e
					// Judged afresh at Settle: what held before it does
					// not count as converging after it.
					c.lastOK = false
					c.evaluated = false
				}
				// After Settle pred is judged at every change; before it,
				// only at the user's steps and at faults, which is where
				// the explanation needs to know whether it held and costs
				// little (the workload phase has most of the writes).
				if c.settled || e.Op == model.OpWorkload || e.Actor == model.ActorFault {
					c.judge(pred, s, c.stateStep)
				}
				if e.Change != model.ChangeNone {
					c.stateStep = e.Step
				}
				return nil
			}, finish: func(c *convergence, s *State, h *model.History) *Violation {
				if !c.settled {
					return nil
				}
				ok, why := pred(s)
				if ok {
					return nil
				}
				c.judge(pred, s, c.stateStep)
				var end model.Event
				if n := len(h.Events); n > 0 {
					end = h.Events[n-1]
				}
				quiescent := 0
				for i := len(h.Events) - 1; i >= 0; i-- {
					if h.Events[i].Op == model.OpQuiescent {
						quiescent = h.Events[i].Step
						break
					}
				}
				settle := &c.settle
				var b strings.Builder
				fmt.Fprintf(&b, "Settle at step %d (t=%s); the history ended %d steps and %s of logical time later, at step %d (t=%s, store revision %d).\n",
					settle.Step, settle.Time, end.Step-settle.Step, end.Time-settle.Time, end.Step, end.Time, s.Revision())
				if quiescent > 0 {
					fmt.Fprintf(&b, "The run reached Quiescent at step %d: nothing was left to do, and it never converged.\n", quiescent)
				} else {
					b.WriteString("The run hit its step bound without reaching Quiescent.\n")
				}
				fmt.Fprintf(&b, "At the end: %s.\n", strings.TrimSuffix(why, "."))
				switch {
				case !c.heldEver:
					b.WriteString("The predicate never held in this run (checked before Settle at the workload's steps and the faults, and after Settle at every change).\n")
				case !c.everTrue:
					fmt.Fprintf(&b, "The predicate last held after step %d, before Settle (checked at the workload's steps and the faults), and never after it.\n", c.lastHeld)
				default:
					fmt.Fprintf(&b, "The predicate was first true after Settle after step %d, last held after step %d, and was false again after step %d.\n", c.firstTrue, c.lastHeld, c.lastFall)
				}
				faults := &s.faults // the state's, shared with the other monitors
				b.WriteString(faults.explain())
				related := append([]int{settle.Step}, faults.related()...)
				if c.heldEver && c.lastHeld > 0 {
					related = append(related, c.lastHeld)
				}
				return &Violation{Step: end.Step, Event: end, Explanation: b.String(), Related: sortedSteps(related, end.Step)}
			}, hash: func(c *convergence, h hash.Hash64) { hashBool(h, c.settled) }}
		},
	}
}

// convergence is the state of an EventuallyConverges monitor.
type convergence struct {
	settled   bool
	settle    model.Event
	evaluated bool
	lastRev   model.Revision
	lastOK    bool
	everTrue  bool
	firstTrue int // step after which pred was first true
	lastFall  int // step after which pred last turned false after being true
	stateStep int // the step the state passed to Observe reflects
	// Over the whole run, for the explanation: whether and after which
	// step pred last held.
	heldEver bool
	lastHeld int
}

// judge evaluates pred on s (the state after step asOf), unless the store
// did not change since the last evaluation.
func (c *convergence) judge(pred func(s *State) (bool, string), s *State, asOf int) {
	if c.evaluated && s.Revision() == c.lastRev {
		return
	}
	ok, _ := pred(s)
	if ok {
		c.heldEver, c.lastHeld = true, asOf
	}
	if c.settled {
		if ok && !c.everTrue {
			c.everTrue, c.firstTrue = true, asOf
		}
		if !ok && c.lastOK {
			c.lastFall = asOf
		}
	}
	c.evaluated, c.lastRev, c.lastOK = true, s.Revision(), ok
}

// requestKey names a reconcile request of one controller.
func requestKey(e *model.Event) string {
	if e.Kind == "" && e.Name == "" {
		return ""
	}
	return e.Kind + " " + e.Key()
}

// requestKeyIs reports whether requestKey(e) == s, without building the
// key.
func requestKeyIs(s string, e *model.Event) bool {
	if e.Kind == "" && e.Name == "" {
		return s == ""
	}
	n := len(e.Kind)
	return len(s) > n && s[:n] == e.Kind && s[n] == ' ' && e.KeyIs(s[n+1:])
}

// NoStuckReconcile is the safety property "a reconcile is never stuck on an
// error once the faults are over": the same request of the same controller
// must not end (ReconcileDone) with the same non-empty Err k times in a row
// while the store does not change (no change event of any actor, on any
// object, between the first and the k-th).
//
// Only failures after the CaughtUp event count: the faults are over
// (Settle) and every watch cache and informer has since reached the store's
// head, so the controller is no longer failing on a view the faults left
// stale. Failures before it, however many, are expected and forgotten. A
// history without a CaughtUp event is never judged.
//
// Nor do failures count while a graceful deletion is under way (an object
// whose deletionTimestamp is still ahead of the failure's logical time: a
// pod in its grace period): the store will change at that deadline
// without anyone acting, so retrying can help, and a real controller
// failing on a Terminating pod until it is gone is waiting, not stuck.
// (Without this rule an eviction near the end of the faults made casskop's
// read of the evicted node fail three times within 15 ms of exponential
// backoff, 20 s before the pod was due to go: a false alarm.)
//
// The request is the Kind/Namespace/Name of the ReconcileDone event or, when
// it names none, of the controller's latest Reconcile event. A successful
// ReconcileDone, a different error or any change event starts the count
// again. The violation is at the k-th ReconcileDone; the explanation lists
// the k steps and the faults of the run (as EventuallyConverges does: each
// crash with the API call of the reconcile it interrupted, paused caches,
// dropped events, evictions, the latest stale read), and Related the first
// k-1, the CaughtUp step and the faults' steps. k < 1 panics.
func NoStuckReconcile(k int) Property {
	if k < 1 {
		panic(fmt.Sprintf("properties: NoStuckReconcile(%d): k must be at least 1", k))
	}
	return Property{
		Name:      "NoStuckReconcile(" + strconv.Itoa(k) + ")",
		Statement: "a reconcile never goes on failing, after the faults are over, with the same error " + strconv.Itoa(k) + " times in a row while the store stays unchanged",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			st := &stuckReconciles{current: make(map[model.Actor]string), streaks: make(map[string]*streak), keys: make(map[model.Actor]streakKey)}
			return statefulMonitor[stuckReconciles]{st: st, clone: (*stuckReconciles).fork, observe: func(m *stuckReconciles, s *State, e *model.Event) *Violation {
				faults := s.faultLog(e)
				if e.Change != model.ChangeNone {
					m.changes++
				}
				switch e.Op {
				case model.OpCaughtUp:
					// Failures while a fault is active or its effects
					// linger (a paused cache, an informer behind the store)
					// are expected: only failures from here on count.
					if m.caughtUp == 0 {
						m.caughtUp = e.Step
						clear(m.streaks)
					}
					return nil
				case model.OpReconcile:
					if cur, ok := m.current[e.Actor]; !ok || !requestKeyIs(cur, e) {
						m.current[e.Actor] = requestKey(e)
					}
					return nil
				case model.OpCrash:
					delete(m.current, e.Actor)
					return nil
				case model.OpReconcileDone:
				default:
					return nil
				}
				var req string
				if cur := m.current[e.Actor]; requestKeyIs(cur, e) {
					req = cur // the same string, already built
				} else {
					req = requestKey(e)
				}
				if req == "" {
					req = m.current[e.Actor]
				}
				if req == "" {
					return nil
				}
				sk := m.keys[e.Actor]
				if sk.key == "" || sk.req != req {
					sk = streakKey{req: req, key: string(e.Actor) + " " + req}
					m.keys[e.Actor] = sk
				}
				key := sk.key
				if e.Err == "" || m.caughtUp == 0 || s.gracefulDeletionPending(e.Time) {
					delete(m.streaks, key)
					return nil
				}
				st := m.streaks[key]
				if st == nil || st.err != e.Err || st.changes != m.changes {
					st = &streak{err: e.Err, changes: m.changes}
					m.streaks[key] = st
				}
				st.steps = append(st.steps, e.Step)
				if len(st.steps) < k {
					return nil
				}
				steps := make([]string, len(st.steps))
				for i, x := range st.steps {
					steps[i] = strconv.Itoa(x)
				}
				v := &Violation{
					Step:  e.Step,
					Event: *e,
					Explanation: fmt.Sprintf("%s's reconcile of %s ended with the same error %d times in a row, at steps %s,\n"+
						"and the store did not change in between (it stayed at revision %d), so retrying cannot help;\n"+
						"every failure came after step %d, when the faults were over and every cache had caught up with the store:\n%s\n%s",
						e.Actor, req, len(st.steps), strings.Join(steps, ", "), s.Revision(), m.caughtUp, e.Err, faults.explain()),
					Related: sortedSteps(append(append([]int{m.caughtUp}, st.steps[:len(st.steps)-1]...), faults.related()...), e.Step-1),
				}
				delete(m.streaks, key)
				return v
			}, hash: func(m *stuckReconciles, h hash.Hash64) {
				// What a future ReconcileDone is judged against: whether the
				// world caught up (the step only explains), the request each
				// controller reconciles, and each streak's error, length (k
				// or more counts as k) and whether the store changed since it
				// began. The change counter itself is not state: only its
				// equality with a streak's start matters.
				hashBool(h, m.caughtUp != 0)
				for _, a := range slices.Sorted(maps.Keys(m.current)) {
					hashString(h, string(a))
					hashString(h, m.current[a])
				}
				hashInt(h, -1)
				for _, key := range slices.Sorted(maps.Keys(m.streaks)) {
					st := m.streaks[key]
					hashString(h, key)
					hashString(h, st.err)
					hashInt(h, min(len(st.steps), k))
					hashBool(h, st.changes == m.changes)
				}
			}}
		},
	}
}

// stuckReconciles is the state of a NoStuckReconcile monitor.
type stuckReconciles struct {
	changes  int                    // change events so far
	caughtUp int                    // step of the CaughtUp event, 0 before it
	current  map[model.Actor]string // each controller's latest request
	streaks  map[string]*streak
	// keys caches each controller's latest streak key (actor, a space,
	// request), so a controller reconciling the same request again builds
	// neither string again.
	keys map[model.Actor]streakKey
}

// streak is a run of failures of one request with one error.
type streak struct {
	err     string
	changes int
	steps   []int
}

type streakKey struct{ req, key string }

// fork copies the state: a streak grows in place, so each is copied.
func (m *stuckReconciles) fork() stuckReconciles {
	c := *m
	c.current, c.keys, c.streaks = maps.Clone(m.current), maps.Clone(m.keys), make(map[string]*streak, len(m.streaks))
	for k, st := range m.streaks {
		c.streaks[k] = &streak{err: st.err, changes: st.changes, steps: slices.Clone(st.steps)}
	}
	return c
}

// NoReconcilePanic is the safety property "a reconcile never panics": any
// Panic event is a violation, with the stack (the event's Detail) in the
// explanation.
func NoReconcilePanic() Property {
	return Property{
		Name:      "NoReconcilePanic",
		Statement: "a reconcile never panics",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			return statelessMonitor{monitorFuncs{observe: func(s *State, e *model.Event) *Violation {
				if e.Op != model.OpPanic {
					return nil
				}
				return &Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("%s panicked while reconciling %s at step %d (t=%s):\n%s",
					e.Actor, orNone(requestKey(e)), e.Step, e.Time, orNone(e.Detail))}
			}}}
		},
	}
}

// NoEndlessReconcile is the safety property "a reconcile always returns
// within its API-call budget": any StepBudget event is a violation.
func NoEndlessReconcile() Property {
	return Property{
		Name:      "NoEndlessReconcile",
		Statement: "a reconcile never exceeds its API-call budget",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			return statelessMonitor{monitorFuncs{observe: func(s *State, e *model.Event) *Violation {
				if e.Op != model.OpStepBudget {
					return nil
				}
				return &Violation{Step: e.Step, Event: *e, Explanation: fmt.Sprintf("%s's reconcile of %s exceeded its API-call budget at step %d (t=%s) without returning: %s",
					e.Actor, orNone(requestKey(e)), e.Step, e.Time, orNone(e.Detail))}
			}}}
		},
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none recorded)"
	}
	return s
}
