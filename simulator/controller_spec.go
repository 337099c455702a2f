package simulator

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// ControllerSpec describes a controller under test the way
// controller-runtime's builder does: the primary type, owned types, extra
// watches, and a factory for the reconciler. The factory is called at start
// and after every crash, so each incarnation starts with empty memory.
type ControllerSpec struct {
	Name string
	// For is the primary type: its events enqueue the object's own key.
	For client.Object
	// Owns lists types whose events enqueue the owner named by their
	// controller ownerReference, when that owner is of the For type.
	Owns []client.Object
	// Watches lists other types with their own mapping to requests.
	Watches []Watch
	// New builds the reconciler from the client it must use.
	New func(c client.Client) reconcile.Reconciler
	// NewWithEnv is New for reconcilers that also need the logical clock or
	// the world's external systems; set one of New and NewWithEnv.
	NewWithEnv func(env *Env) reconcile.Reconciler
	// Setup registers the controller with a controller-runtime manager the
	// way the operator's own main does, e.g. by calling its NewReconciler
	// and SetupWithManager: the builder's real predicates and event
	// handlers then decide what is enqueued (see Manager). With Setup, set
	// For to the type SetupWithManager's For names (it labels reconciles in
	// the history and is the default stale-fault kind) and leave Owns,
	// Watches, New and NewWithEnv empty. Setup runs at start and after every
	// crash; ctx ends when the incarnation does.
	Setup func(ctx context.Context, mgr manager.Manager) error
	// MaxCallsPerReconcile bounds API calls per reconcile (default
	// DefaultMaxCallsPerReconcile).
	MaxCallsPerReconcile int
	// KeepsMemory says the reconciler keeps state in memory from one
	// reconcile to the next (scale expectations, a cache of its own), as
	// KubeRay's does. The exhaustive search merges two paths that reach
	// the same world state; without this it assumes, as controller-runtime
	// asks of reconcilers, that a controller's memory holds nothing its
	// writes do not show, and two paths whose controllers remember
	// different things may merge, hiding what one of them would do next.
	// With it, the fingerprint also holds a digest of everything the
	// controller's current incarnation was told through its client, its
	// external calls and its informers (simulator/memory.go): fewer states
	// merge, and none whose memories may differ. What a reconciler reads
	// around them (an Env's World directly) is not in the digest.
	KeepsMemory bool
}

// validate says what is wrong with a spec, and what to do.
func (s *ControllerSpec) validate() error {
	if s.For == nil {
		return fmt.Errorf("controller %q has no For type: set it to the primary type it reconciles", s.Name)
	}
	if s.Setup != nil {
		if s.New != nil || s.NewWithEnv != nil || len(s.Owns) > 0 || len(s.Watches) > 0 {
			return fmt.Errorf("controller %q has Setup and also New, NewWithEnv, Owns or Watches: with Setup, the watches and the reconciler come from what Setup registers with the manager; leave the others empty", s.Name)
		}
		return nil
	}
	if s.New == nil && s.NewWithEnv == nil {
		return fmt.Errorf("controller %q has neither New, NewWithEnv nor Setup", s.Name)
	}
	return nil
}

// Env is what a reconciler factory gets: the client, the logical clock and
// the world (for external systems).
type Env struct {
	Client client.Client
	World  *World
	Actor  model.Actor
}

// Now returns the logical time as a wall-clock instant: the reconciler's
// time.Now.
func (e *Env) Now() time.Time { return e.World.Clock.Wall() }

// hostSpec derives what the hosts of this controller run: a reconciler
// factory given an Env of world w.
func (s *ControllerSpec) hostSpec(w *World) *hostSpec {
	hs := &hostSpec{name: s.Name, forType: s.For, owns: s.Owns, watches: s.Watches, setup: s.Setup, maxCalls: s.MaxCallsPerReconcile}
	if s.KeepsMemory {
		hs.keepsMemory = true
		if w.explorer.mergesStates {
			hs.memory = &memorySources{content: w.explorer.contentHash, externals: w.externalState}
		}
	}
	if s.Setup == nil {
		hs.newReconciler = func(c *Client, actor model.Actor) reconcile.Reconciler {
			if s.NewWithEnv != nil {
				return s.NewWithEnv(&Env{Client: c, World: w, Actor: actor})
			}
			return s.New(c)
		}
	}
	return hs
}
