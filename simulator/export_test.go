package simulator

import (
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// CheckRegisteredCopiers checks every registered typed copier
// (RegisterCopier, RegisterStatusCopier) as
// TestTypedCopiersCopyLikeTheGeneratedMethods checks the built-in ones,
// and that every type in want is registered and found by a new world's
// kinds.
func CheckRegisteredCopiers(t *testing.T, want ...reflect.Type) {
	t.Helper()
	n := 0
	registeredCopiers.Range(func(k, v any) bool {
		n++
		checkTypedCopier(t, k.(reflect.Type), v.(*typedCopier))
		return true
	})
	for _, typ := range want {
		if _, ok := registeredCopiers.Load(typ); !ok {
			t.Errorf("%s has no registered copier", typ)
		}
		if factsOf(typ).typed == nil {
			t.Errorf("%s: a new world's kind facts do not use its registered copier", typ)
		}
	}
	if n == 0 {
		t.Error("no registered copier: nothing checked")
	}
}

// SetWritePaths makes the stores built from now on take the fast write
// paths ("fast"), none of them ("slow"), or the fast ones with every
// dropped answer's request zeroed ("poison"): for the external tests that
// compare whole runs.
func SetWritePaths(paths string) {
	switch paths {
	case "fast":
		writePaths.Store(writesFast)
	case "slow":
		writePaths.Store(writesSlow)
	case "poison":
		writePaths.Store(writesPoisonDropped)
	default:
		panic("SetWritePaths: want fast, slow or poison, not " + paths)
	}
}

// NextTimerForTest is the time the world's clock step ticks to.
func (w *World) NextTimerForTest() (model.Time, bool) { return w.nextTimer() }

// ReconcilingForTest is the request of h's reconcile in flight.
func (h *Host) ReconcilingForTest() (reconcile.Request, bool) {
	if h.run == nil {
		return reconcile.Request{}, false
	}
	return h.run.req, true
}

// BuiltinStepsForTest returns, for each built-in actor of the world
// whose steps the scheduler keeps between collects, the actor and the
// steps the last collect offered for it.
func (w *World) BuiltinStepsForTest() (actors []Actor, kept [][]Step) {
	for i, a := range w.actors {
		if i < len(w.sched.builtin) && w.sched.builtin[i] {
			actors = append(actors, a)
			kept = append(kept, w.sched.actorSteps[i])
		}
	}
	return actors, kept
}

// EventsAt is the number of history events the checkpointed world had
// recorded.
func (cp *Checkpoint) EventsAt() int { return cp.log.nEvents }

// ContentHashesComputed is the number of objects the world's fingerprints
// hashed the content of (the others' hashes were known).
func (w *World) ContentHashesComputed() int { return w.explorer.content.computed }

// WithoutHashes is the checkpoint without the content hashes it hands
// down.
func (cp *Checkpoint) WithoutHashes() *Checkpoint {
	c := *cp
	c.hashes = nil
	return &c
}

// PropertyEventsReplayed is the number of history events a world resumed
// from a checkpoint showed fresh property monitors: 0 when it forked the
// checkpoint's.
func (w *World) PropertyEventsReplayed() int { return w.props.replayed }

// WithoutPropertyFork is the checkpoint without its fork of the property
// monitors: worlds resumed from it replay the history into fresh ones.
func (cp *Checkpoint) WithoutPropertyFork() *Checkpoint {
	c := *cp
	c.props = nil
	return &c
}
