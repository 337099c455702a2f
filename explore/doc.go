// Package explore searches the schedules of a simulator.Scenario for a
// property violation: Explore runs one strategy (the exhaustive search of
// the bounded space by default; the sampling strategies Random, PCT and
// uniform) under one Options type and returns one Report type (its JSON
// form, Result, is what `explore check -json` and `explore merge` write);
// Check is the go test helper and Fuzz the adapter for `go test -fuzz`.
//
// It is also the command line: Main (and Run, in-process) gives any main
// package the verbs list, check, replay, shrink, view and merge over the
// scenarios passed to it, with exit statuses 0, 1 and 2; cmd/explore is
// Main over the shipped case studies, and a user's module gets its own the
// same way. Check, Fuzz and CheckWorkloads write the trace of a violation
// to $OPCHECK_OUT or testdata/opcheck, record in it the go test command
// that rebuilds its scenario (and, for CheckWorkloads, the generated
// workload), and read the test binary flags -opcheck.replay, -opcheck.view
// and -opcheck.shrink, so every verb works on a scenario defined outside
// opcheck, from go test as from the module's own Main.
//
// What it models: the nondeterminism of a run, as the choice stream the
// simulator asks (which enabled step runs next; a restarted controller's
// apiserver is part of the crash step), each a model.Decision from which
// every strategy, the exhaustive search included, decides alone. Schedule i of an exploration runs with the
// chooser of its strategy seeded with Options.Seed+i, so any schedule is
// reproduced by Seed=Seed+i, Schedules=1, and sharding (schedule i belongs to
// shard i % Shards) partitions the indices exactly. No wall clock and no
// global randomness decide which schedules run; Elapsed is only measured.
// Report.States counts, for the sampling strategies, distinct final world
// states (simulator.World.EndStateHash: live objects' content, with their
// resourceVersions unless the scenario declares them opaque, caches,
// queues, clock; a schedule that ends with a
// reconcile in flight counts none), a coverage figure, not a dedup.
//
// PCT is adapted: the enabled-step list position stands in for the
// thread (see PCT), change points are drawn from a fixed step count
// (DefaultPCTSteps), and server and data choices are uniform.
//
// The exhaustive search explores every placement of the fault budget along
// the default schedule (the bounds are in docs/explore.md), offering a fault
// again only after steps it does not commute with (reduction.go) and
// deduplicating states reached at any depth; a complete search is
// "verified". Interleavings beyond the default
// schedule are what the sampling strategies explore, and their best verdict
// is "inconclusive".
//
// Options.Workers goroutines run schedules (default GOMAXPROCS). Sampling
// strategies account for results in index order; the exhaustive search
// shares its frontier and visited states and reports the smallest violating
// schedule in depth-first order. The verdict, the violation and its trace
// do not depend on the number of workers.
//
// While an Explore runs (Check's included), it tunes the process's garbage
// collector, which the default GOGC=100 would keep running over a small
// live heap: GOGC follows the live heap so the heap grows by 256 MiB (or
// by the live heap, once that is larger) between collections, at most
// GOGC=1000, and the default comes back when the last exploration ends
// (gc.go). GOGC set in the environment, or by the program, is left alone.
//
// What it does not do: shrinking and the trace format are package traces'.
// A program knows only the scenarios passed to it: a trace of another
// program's scenario is refused (exit 2) with the command, from the trace's
// rebuild line, of the program that knows it. Under go test the exit
// status of a harness error is 1, whatever the test binary exits with.
package explore
