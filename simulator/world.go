package simulator

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// Step is one enabled action of the world: the scheduler chooses among the
// enabled steps with one ChooseStep decision. Labels are stable strings
// (they name the step in traces and give PCT its priorities).
type Step struct {
	Actor model.Actor
	// Class says what the step does; strategies and the scheduler tell
	// steps apart by it, never by Label.
	Class model.StepClass
	Label string
	// Fault is the fault this step injects (0 for an ordinary step); the
	// world spends budget for it.
	Fault model.FaultKind
	// Kind is the resource type a stale or drop fault concerns.
	Kind string
	// Namespace and Name are the pod an eviction deletes.
	Namespace, Name string
	// Server is the apiserver a crash restarts the controller on.
	Server int
	// Unobserved marks a stale fault nothing can observe before the
	// faults end (faultInjector.unobserved).
	Unobserved bool
	// StrandsPause marks the last crash when, after it, a paused watch
	// cache nothing has read behind the store is on an apiserver nothing
	// reads (faultInjector.strands).
	StrandsPause bool
	Run          func()
}

// Actor is a built-in controller or an external system: something that
// takes steps of its own. Steps appends the actor's enabled steps, in a
// deterministic order, to buf. Actors read ground truth with World.Peek and
// World.PeekList and write through their own client (World.ActorClient).
type Actor interface {
	Name() model.Actor
	Steps(w *World, buf []Step) []Step
}

// Timed is implemented by actors with pending timers (an external system's
// scheduled transition): NextTimer returns the earliest logical time at which
// the actor will have something to do, or false.
type Timed interface {
	NextTimer() (model.Time, bool)
}

// World is one run of a scenario: the cluster, the controllers under test,
// the built-in actors, the workload and the fault budget, driven by one
// Chooser. It composes parts that each own their state:
//
//   - sched (scheduler.go): the enabled steps, the decisions asked of the
//     chooser, the settle phase's turns, the step count and quiescence;
//   - workload (workload_driver.go): the user's workload steps, their
//     retries, wait conditions and deadlines, and WorkloadStuck;
//   - faults (faults.go): the fault budget, the fault steps and what the
//     faults did (paused caches), until the settle phase ends them;
//   - props (property_hook.go): the property monitor, its violations and
//     the run's harness error;
//   - explorer (explorer_hooks.go): what the explorer reads of a run (the
//     state fingerprint, whether the chooser pruned it, the writes).
//
// The World itself holds what they share: the cluster, the hosts of the
// controllers, the actors and their clients.
type World struct {
	*Cluster
	Scenario   *Scenario
	runOptions RunOptions // what it was built with, for a Checkpoint

	hosts     []*Host
	hostSteps map[*Host]*hostSteps // each live host's steps, built once
	actors    []Actor
	clients   map[model.Actor]*Client
	peek      *Client      // unrecorded quorum reads of ground truth
	lists     sortedTables // the store's tables in key order, per table version
	// selection and selectionOptions are storedSelection's array and
	// options, reused from one selection to the next.
	selection        []client.Object
	selectionOptions client.ListOptions
	kinds            actorKinds // kinds the built-in actors read, resolved once

	sched    stepScheduler
	workload workloadDriver
	faults   faultInjector
	props    propertyHook
	explorer explorerHooks
}

// Hosts returns the controller hosts (one per controller under test).
func (w *World) Hosts() []*Host { return w.hosts }

// ActorClient returns the client an actor writes through: apiserver-1,
// quorum reads, recorded under the actor's name. A built-in actor's
// client does not copy a write's stored result back into the request
// (Client.dropAnswers): built-in actors build each request for its one
// write and never read it again.
func (w *World) ActorClient(a model.Actor) *Client {
	c := w.clients[a]
	if c == nil {
		c = w.Client(a, 1, true)
		c.dropAnswers = a.Group() == model.GroupBuiltIn && !w.Store.slowWrites
		w.clients[a] = c
	}
	return c
}

// Peek reads ground truth without recording an event. The object returned
// is the store's own: do not modify it.
func (w *World) Peek(obj client.Object, namespace, name string) (client.Object, bool) {
	k, err := w.Store.kinds.forObject(obj)
	if err != nil {
		panic(err)
	}
	return w.Store.peek(k, objectKey(k, namespace, name))
}

// PeekList lists ground truth of the kind of proto (a typed object), in key
// order, without recording an event. The objects are the store's own, and
// the slice is shared until the kind next changes: modify neither (nor
// append to the slice).
func (w *World) PeekList(proto client.Object, namespace string) []client.Object {
	k, err := w.Store.kinds.forObject(proto)
	if err != nil {
		panic(err)
	}
	return storedList(w, k, namespace)
}

// Reader is a client.Reader over ground truth that records nothing: for
// workload wait conditions and properties.
func (w *World) Reader() client.Reader { return w.peek }

// record is Record for a non-API event.
func (w *World) record(actor model.Actor, op model.Op, kind, namespace, name, detail string) {
	w.Record(model.Event{Actor: actor, Op: op, Kind: kind, Namespace: namespace, Name: name, Detail: detail, HeadRev: w.Store.rev})
}

// Enabled returns the steps enabled at the current decision: a chooser
// that picks by label (ScriptChooser) reads it while Choose is asked.
func (w *World) Enabled() []Step { return w.sched.enabled }

// PausedCaches is the number of watch caches paused by a stale fault.
func (w *World) PausedCaches() int { return len(w.faults.paused) }

// Pruned reports whether the chooser ended the run (model.Prune).
func (w *World) Pruned() bool { return w.explorer.pruned }

// Writes counts the events that changed the store or touched an external
// system so far: the explorer offers faults only after such events.
func (w *World) Writes() int { return w.explorer.writes }

// Violations returns the property violations found so far.
func (w *World) Violations() []properties.Violation { return w.props.violations }

// newBareWorld builds a world with a cluster and no controllers, workload or
// faults: for tests of the built-in actors.
func newBareWorld(scheme *runtime.Scheme, servers int) *World {
	w := &World{Cluster: NewCluster(scheme, ClusterOptions{APIServers: servers}), clients: map[model.Actor]*Client{}}
	w.peek = w.Client("peek", 1, true)
	w.peek.silent = true
	return w
}

// ActorNamed returns the actor (built-in or external system) with that
// name, or nil: reconciler factories use it to reach their world's external
// systems.
func (w *World) ActorNamed(name model.Actor) Actor {
	for _, a := range w.actors {
		if a.Name() == name {
			return a
		}
	}
	return nil
}
