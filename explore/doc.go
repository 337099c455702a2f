// Package explore searches the schedules of a simulator.Scenario for a
// property violation: strategies are model.Choosers (Random, PCT), Explore
// is the loop over a budget of schedules, Check is the go test helper and
// Fuzz the adapter for `go test -fuzz`.
//
// What it models: the nondeterminism of a run, as the choice stream the
// simulator asks (which enabled step runs next, which apiserver a restarted
// controller talks to, data). Schedule i of an exploration runs with the
// chooser of its strategy seeded with Options.Seed+i, so any schedule is
// reproduced by Seed=Seed+i, Schedules=1, and sharding (schedule i belongs to
// shard i % Shards) partitions the indices exactly. No wall clock and no
// global randomness decide which schedules run; Elapsed is only measured.
// Report.States counts distinct final store states (live objects and their
// content, revision included), a coverage figure, not a dedup.
//
// PCT is adapted: the enabled-step list position stands in for the
// thread (see PCT), change points are drawn from a fixed step count
// (DefaultPCTSteps), and server and data choices are uniform.
//
// What it does not model or do (yet): the exhaustive bounded DFS with state
// deduplication (strategy "exhaustive" is rejected with "not implemented
// yet"), so the best verdict is "inconclusive", never "verified"; gopter
// workload generation; shrinking and the trace format (package traces).
package explore
