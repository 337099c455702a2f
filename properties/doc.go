// Package properties judges histories of simulated clusters.
//
// A property is plain data (Property): a name, a one-line statement, a kind
// (Safety or Liveness) and a factory of online checkers (Monitor). A monitor
// sees every event of one history in order, together with ground truth
// (State) as it was before the event, and returns a Violation at the first
// event that breaks its guarantee; liveness monitors judge at Finish, when
// the history is over. Violations are data: the step, the offending event, a
// human explanation with the numbers, and the steps of the events the
// verdict depends on. Check runs properties over a finished history; Run is
// the same thing fed one event at a time, as the simulator produces them.
//
// What it models. Ground truth is the store, and the store is what the
// history's change events say: replaying the Objects of events whose Change
// is not ChangeNone, in order, rebuilds every object at every revision.
// Properties judge against that truth, never against what a cache served.
// They look objects up by Go type (Get, List), checked against the
// scenario's scheme so that an unknown kind fails loudly, and judge
// membership per instance by owner UID (OwnedBy, ControlledBy).
// The generic properties cover the guarantees that matter for controllers
// under faults: a controller never deletes a live object (NoDeleteOfLive),
// never scales a StatefulSet below the desired size (NoScaleBelow), the
// system converges once faults stop (EventuallyConverges), reconciles are
// not stuck on the same error (NoStuckReconcile), never panic
// (NoReconcilePanic) and end within their API-call budget
// (NoEndlessReconcile). CheckLinearizable checks with porcupine that each
// object behaved as a linearizable register of resourceVersions for the
// reads of chosen actors, and names every stale read; WriteVisualization
// draws porcupine's HTML view of it. A monitor may fingerprint the state
// that can change its future verdicts (StateHasher, Fingerprinted), so the
// exhaustive explorer can merge schedules that reached the same world
// without merging different monitor states; monitors without one turn
// that pruning off. A Run whose monitors can be copied (Forker, Run.Fork)
// is forked at the explorer's checkpoints, so a resumed schedule need not
// show fresh monitors its whole history again.
//
// What it does not model. It does not run anything: no store, no apiserver,
// no controller; it only reads histories, and it trusts them (a change event
// without an object panics). It knows nothing of a particular operator:
// what is "live" or "desired" is the caller's function over State. It does
// not judge what a cache served against the cache, only against the store;
// Lists are checked for the objects they returned, not for those they
// missed. Liveness is judged on a finite history: "eventually" means "by
// the end of the history", so a verdict depends on how long the settle
// phase ran, which the explanation says.
//
// Everything is deterministic: no wall clock (except porcupine's timeout,
// which can only turn a verdict into Unknown), no randomness, and every
// listing is sorted.
package properties
