// Package explore searches the schedules of a simulator.Scenario for a
// property violation: Explore runs one strategy (the exhaustive search of
// the bounded space by default; the sampling strategies Random, PCT and
// uniform) under one Options type and returns one Report type (its JSON
// form, Result, is what `explore check -json` and `explore merge` write);
// Check is the go test helper and Fuzz the adapter for `go test -fuzz`.
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
// The exhaustive search explores every placement of the fault budget along
// the default schedule (the bounds are in docs/explore.md), deduplicating
// states; a complete search is "verified". Interleavings beyond the default
// schedule are what the sampling strategies explore, and their best verdict
// is "inconclusive".
//
// Options.Workers goroutines run schedules (default GOMAXPROCS). Sampling
// strategies account for results in index order; the exhaustive search
// shares its frontier and visited states and reports the smallest violating
// schedule in depth-first order. The verdict, the violation and its trace
// do not depend on the number of workers.
//
// What it does not do: shrinking and the trace format are package traces'.
package explore
