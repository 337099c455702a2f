// Package traces is opcheck's counterexample format: a plain-text trace
// file (one item per line, readable in a terminal and in a diff), its writer
// and line-numbered parser, replay helpers, a shrinker, and a
// self-contained HTML viewer.
//
// A trace records everything needed to reproduce a run: the scenario name,
// the fault budget, the choice stream (model.FormatChoices), and, for a
// reader, every event of the history as its model.Event.Line and the
// violation the run was reported for. Replaying feeds the choices back into
// the scenario; the event lines are the expected output and Diff finds the
// first line where a replay departs from them.
//
// What it models: the recorded decisions of one run and what a reader needs
// to understand it — the event lines, which parse back into their fields
// (ParseEventLine), and the violation with its explanation.
//
// What it does not model: the objects themselves. A trace file does not
// store object bodies or the full history; those come back by replaying the
// choices. The viewer shows object versions only when given the replayed
// model.History. Running a scenario is not this package's job either:
// Shrink receives the runner as a function, so traces never imports the
// simulator or the explorer.
package traces
