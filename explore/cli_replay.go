package explore

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// verbFlags parses the flags of a verb that takes one TRACE argument.
// Flags may come before or after it. It returns the trace path, or an exit
// status when the command is done (help) or wrong (usage).
func verbFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (string, int, bool) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", exitOK, false
			}
			return "", exitUsage, false // the flag package printed what is wrong
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) != 1 {
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "%s: no trace file given\n", fs.Name())
		} else {
			fmt.Fprintf(stderr, "%s: want one trace file, got %d: %s\n", fs.Name(), len(rest), strings.Join(rest, " "))
		}
		fs.Usage()
		return "", exitUsage, false
	}
	return rest[0], exitOK, true
}

// loadTrace reads a trace file and looks up its scenario. Errors are
// printed, prefixed with the verb, with what to do next.
func (c *cli) loadTrace(verb, path string, stderr io.Writer) (*traces.Trace, *simulator.Scenario, bool) {
	t, err := traces.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n(fix the file, or write a fresh trace with explore check)\n", verb, err)
		return nil, nil, false
	}
	if t.Workload != c.workload {
		how := "replay it with the explore.CheckWorkloads test that wrote it"
		if t.Rebuild != "" {
			how += ": " + testVerb(t.Rebuild, strings.TrimPrefix(verb, "explore "), path)
		}
		fmt.Fprintf(stderr, "%s: %s is a trace of the generated workload %s of %s, which this program cannot rebuild (it runs the scenario's own workload); %s\n", verb, path, t.Workload, t.Scenario, how)
		return nil, nil, false
	}
	sc, err := c.lookup(t.Scenario)
	if err != nil {
		if elsewhere := replayElsewhere(t.Rebuild, path); elsewhere != "" {
			fmt.Fprintf(stderr, "%s: %s: %v; the trace was written by `%s`, which knows it: replay it there with\n  %s\n", verb, path, err, t.Rebuild, elsewhere)
		} else {
			fmt.Fprintf(stderr, "%s: %s: %v; the trace was written by a build that had this scenario, so replay it with that build (its explore.Main or its explore.Check test) or explore a known scenario again\n", verb, path, err)
		}
		return nil, nil, false
	}
	return t, sc, true
}

// rerun runs sc with the fault budget and the choices of a trace (values
// out of range are clamped, and past the end every choice is 0, as
// model.Sequence does), and returns the run as a trace with its first
// violation.
func rerun(sc *simulator.Scenario, faults model.FaultBudget, choices []model.Choice) (*simulator.Result, *traces.Trace, error) {
	res, err := simulator.Run(sc, &model.Sequence{Choices: choices}, simulator.RunOptions{Faults: &faults})
	if err != nil {
		return nil, nil, fmt.Errorf("running %s: %w (a harness error, not a finding)", sc.Name, err)
	}
	var v *properties.Violation
	if len(res.Violations) > 0 {
		v = &res.Violations[0]
	}
	return res, traces.FromRun(sc.Name, faults, res.Choices, res.History, v), nil
}

// outcome compares a trace with its replay and says, in one line, whether
// the recorded violation reproduced, and if not, why.
func outcome(want, got *traces.Trace) (reproduced bool, msg string) {
	k, wl, gl, same := traces.Diff(want.Events, got.Events)
	diverged := func() string {
		return fmt.Sprintf("the schedule diverged at event %d: want %s got %s (the scenario or the code changed since the trace was written)", k+1, lineOrNone(wl), lineOrNone(gl))
	}
	switch {
	case want.Violation == nil && got.Violation == nil:
		if same {
			return false, "matches: the trace records no violation and the replay breaks nothing"
		}
		return false, "differs: " + diverged()
	case want.Violation == nil:
		return true, fmt.Sprintf("new violation: %s at step %d, where the trace records none (%s)", got.Violation.Property, got.Violation.Step, describeEvents(same, diverged))
	case got.Violation != nil && got.Violation.Property == want.Violation.Property:
		msg = fmt.Sprintf("reproduced: %s at step %d", got.Violation.Property, got.Violation.Step)
		if !same {
			msg += "\n  (but " + diverged() + ")"
		}
		return true, msg
	case !same && got.Violation != nil:
		return false, fmt.Sprintf("not reproduced: %s; the replay broke %s at step %d instead of %s", diverged(), got.Violation.Property, got.Violation.Step, want.Violation.Property)
	case !same:
		return false, "not reproduced: " + diverged()
	case got.Violation != nil:
		return false, fmt.Sprintf("not reproduced: the events match but the replay broke %s instead of %s (the property changed since the trace was written)", got.Violation.Property, want.Violation.Property)
	default:
		return false, "not reproduced: the events match but the property no longer fails"
	}
}

func describeEvents(same bool, diverged func() string) string {
	if same {
		return "the events match"
	}
	return diverged()
}

// lineOrNone quotes an event line for a message; "" is a missing line.
func lineOrNone(l string) string {
	if l == "" {
		return "(no event)"
	}
	return l
}

const replayUsage = `usage: explore replay TRACE

Runs the trace's scenario again with the trace's fault budget and choices and
compares the replay's events with the trace's.
Exit status: 1 the recorded violation reproduced (the bug is still there),
0 it did not (the output says why), 2 the trace cannot be read or its
scenario is unknown.
`

// replay is `explore replay TRACE`.
func (c *cli) replay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage) }
	path, code, ok := verbFlags(fs, args, stderr)
	if !ok {
		return code
	}
	want, sc, ok := c.loadTrace("explore replay", path, stderr)
	if !ok {
		return exitUsage
	}
	start := time.Now()
	_, got, err := rerun(sc, want.Faults, want.Choices)
	if err != nil {
		fmt.Fprintf(stderr, "explore replay: %s: %v\n", path, err)
		return exitUsage
	}
	reproduced, msg := outcome(want, got)
	fmt.Fprintf(stdout, "%s: %s, %d choices, %d events recorded, %d replayed in %s\n", path, want.Scenario, len(want.Choices), len(want.Events), len(got.Events), time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(stdout, msg)
	if reproduced {
		return exitViolation
	}
	return exitOK
}
