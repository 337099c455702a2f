// Command explore is opcheck's CLI: it lists the shipped scenarios and
// explores them for property violations.
//
//	explore list
//	explore check [flags] SCENARIO...
//
// check runs a budget of schedules per scenario with a strategy (random or
// pct), prints a verdict table and, for every violation, a recipe: the
// property, the step, the explanation, the trace file and the command that
// replays exactly the violating schedule. Exit status: 0 no violation, 1 a
// violation, 2 a usage or internal error (the message says what to fix).
//
// What it models: nothing itself; it is a thin shell over package explore
// and the registry in package targets. What it does not do yet: the
// exhaustive strategy ("not implemented yet"), replay, shrink and view
// (they come with package traces; until then trace.go holds a minimal
// writer of the trace text).
package main
