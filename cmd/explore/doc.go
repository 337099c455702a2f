// Command explore is opcheck's CLI.
//
//	explore list                          the shipped scenarios, one a line
//	explore check [flags] SCENARIO...     explore them; print verdicts
//	explore replay TRACE                  re-run a trace's schedule
//	explore shrink [-o OUT] TRACE         a shorter schedule, same violation
//	explore view [-o OUT.html] TRACE      the trace as an HTML page
//	explore merge [-html F] RESULT...     combine the JSON of sharded runs
//
// check explores each scenario with a strategy (exhaustive by default;
// random, pct or uniform), prints a verdict table (violation, verified,
// inconclusive) and, for every violation, a recipe: the property, the step,
// the explanation, the trace file and the command that replays it. Exit
// status, for every verb: 0 no violation (replay: the violation did not
// reproduce), 1 a violation (replay: it reproduced), 2 a usage, input or
// internal error, with a message that says what to fix.
//
// It is explore.Main(targets.All()...): the command line lives in package
// explore, so that a user's module gets the same verbs, with the same exit
// statuses, for its own scenarios from a main package of one line (see
// explore.Main and docs/user-guide.md). Build it (go build or go install)
// rather than go run it: go run reports every non-zero status as 1.
//
// What it models: nothing itself; it only lists the shipped scenarios.
package main
