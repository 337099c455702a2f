// Package simulator is opcheck's simulated Kubernetes control plane: the
// world a controller under test runs in.
//
// The core is an etcd-like Store with one global revision bumped by every
// write and the full history of every change (Store.History). The store
// applies the apiserver's registry semantics at the write's linearization
// point: defaulting and validation of names, metadata and the specs of the
// common built-in kinds, immutable fields (validation.go, defaults.go: 422
// Invalid with a field.ErrorList), the OpenAPI defaults of the CRDs a
// scenario passes (crd.go, apiextensions-apiserver's structural
// defaulting), namespace lifecycle (404 in a missing
// namespace, 403 in a terminating one: namespaces.go), resourceVersion and UID
// preconditions (409 Conflict), metadata.generation (for the kinds that keep
// one, bumped when deletion starts), create-on-update, the status subresource,
// finalizers and deletionTimestamp, graceful pod deletion (deletionTimestamp
// at the end of the grace period; unscheduled or terminated pods go at
// once), the orphan and
// foregroundDeletion finalizers of propagation policies, and deterministic
// UIDs, generateName suffixes and timestamps taken from counters and the
// logical clock (model.Clock).
//
// A Cluster is one Store, N APIServers and the event History. Each
// APIServer keeps one WatchCache per kind, at its own revision; a cache can
// be paused, advanced one event at a time or synced, so that one kind lags
// while another is fresh, and watches resuming from before the retained
// window get 410 Gone. Cluster.Client returns a controller-runtime
// client.Client whose writes go to the store through one apiserver and whose
// reads come from that apiserver's caches (or the head, for quorum reads).
// Every call is recorded as one model.Event.
//
// A World sets the cluster in motion (world.go, run.go, host_steps.go).
// It is composed of parts that each own their state: the step scheduler
// (scheduler.go: enabled steps, decisions, the settle phase's turns,
// quiescence, the step count), the workload driver (workload_driver.go,
// until.go), the fault injector (faults.go), the property hook
// (property_hook.go: monitor, violations, harness error) and the explorer
// hooks (explorer_hooks.go, statehash.go: fingerprint, prune, writes;
// fork.go: World.Checkpoint copies the state at a decision of the fault
// phase, and Checkpoint.Resume builds a world that goes on from it as the
// original would, so that the exhaustive search need not replay a
// schedule's prefix; it refuses a world with a reconcile in flight, a
// Setup-built or memory-keeping controller, the wall clock, or an
// external system that is not Forkable);
// values recomputed only when the store's revision (or the kinds they
// read) moves share one memo (memo.go, actor_helpers.go). A Host (host.go)
// runs each controller under test, unmodified, behind its own client.Client,
// one API call per step (the reconciler's coroutine hands control back at
// every call); informers list from the apiserver the controller is
// connected to and receive its watch events one event per delivery step; a work queue
// with controller-runtime's semantics runs on the logical clock. Built-in
// actors (StatefulSet controller, scheduler binding pods to the one node,
// kubelet confirming deletions after the grace period on the logical
// clock, PVC protection counting only pods bound to the node, garbage
// collector, namespace controller) and a scenario's external systems take
// steps of their own.
// Every nondeterministic decision is one ChooseStep of the model.Chooser,
// asked as a model.Decision (the enabled steps as options, the events
// since the previous decision, the state fingerprint); a chooser may answer
// model.Prune to end the run without a verdict;
// faults (crash-restart on apiserver k, paused cache, dropped watch event of
// any type, watch expiry with 410 and relist, pod eviction) are steps
// within the scenario's budget, followed by
// a fair settle phase in which liveness is judged; the first moment after
// it when every informer has caught up with the store is recorded as
// CaughtUp. ScriptChooser and
// RunScript express hand-written schedules by step labels.
//
// A ControllerSpec with Setup hands the operator's own wiring code a
// controller-runtime manager.Manager (manager.go): the real builder builds
// the real controller, whose predicates and event handlers then decide what
// the host enqueues; the manager gives a cached client with field indexes,
// an API reader served by the apiserver, and an event recorder whose
// events are history lines.
//
// World.StateHash, the exhaustive search's fingerprint, assumes a
// reconciler remembers nothing between reconciles that its writes do not
// show, unless its ControllerSpec says KeepsMemory: then it also holds a
// digest of everything the controller's incarnation was told (memory.go).
// It cannot see a memory a reconciler keeps without saying so.
//
// The world does not model: reconcilers that start goroutines of their own
// or loop without API calls (the first panics, the second hangs the run),
// MaxConcurrentReconciles above 1 (refused), the wall clock of unmodified
// code (time.Now is not the logical clock), controller-runtime's opt-in
// read-your-writes consistency, leader election, more than one node,
// scheduling constraints (resources, affinity, taints), the Binding
// subresource (the bind is an Update),
// rolling updates of StatefulSets, volume binding.
//
// The client answers as controller-runtime's does: typed objects come back
// with empty apiVersion/kind from an apiserver and stamped from a
// controller's informer cache; lists page with Limit and Continue; every
// write can be a dry run (validated, answered, not stored).
//
// Deliberately not modelled in the API: server-side apply and field managers
// (refused), admission, the spec validation and defaulting rules opcheck has
// not written, watch bookmarks, and subresources other than status
// (refused; the create-only Binding kind is served). docs/fidelity.md lists
// every semantic with the test that shows it.
//
// The package's files form layers, and a file uses only what its own
// layer or a lower one declares (layers_test.go checks it):
//
//  1. store: store.go, crd.go, kinds.go, copiers.go, deepequal.go,
//     semdiffer.go, validation.go, defaults.go, graceful.go, namespaces.go,
//     memo.go;
//  2. apiserver: apiserver.go;
//  3. client/informer: client.go, informer.go, cluster.go, memory.go;
//  4. host: host.go, manager.go, queue.go;
//  5. world: world.go, run.go, controller_spec.go, scheduler.go,
//     host_steps.go, workload_driver.go, until.go, faults.go, property_hook.go,
//     explorer_hooks.go, statehash.go, fork.go, scenario.go, script.go, helpers.go,
//     the built-in actors (actor_*.go, their shared helpers in
//     actor_helpers.go).
//
// A lower layer that needs something of a higher one owns a small hook the
// higher one fills in: a Host runs a hostSpec whose reconciler factory
// the world builds from the scenario's ControllerSpec, and the world keeps
// the hosts' steps.
//
// Everything here is deterministic: no wall clock, no global randomness, no
// map order in behaviour. The same calls give byte-identical objects and
// history lines.
package simulator
