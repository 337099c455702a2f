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
// What it models: nothing itself; it is a thin shell over the packages
// explore, traces and targets (the scenario registry). It knows only the
// shipped scenarios: a user's own scenario runs from go test with
// explore.Check.
package main
