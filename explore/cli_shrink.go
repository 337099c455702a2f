package explore

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/traces"
)

const shrinkUsage = `usage: explore shrink [-o OUT] [-runs N] TRACE

Looks for a shorter schedule of the trace's scenario that breaks the same
property (delta debugging over the choices, traces.ShrinkN) and writes it to
OUT (default: TRACE with .trace replaced by .min.trace).
Exit status: 0 written, 2 the trace cannot be read, its scenario is unknown,
or its violation does not reproduce (run explore replay TRACE to see why).

`

// sibling returns path with the suffix old replaced by new (appended when
// path does not end in old).
func sibling(path, old, new string) string {
	return strings.TrimSuffix(path, old) + new
}

// shrink is `explore shrink [-o OUT] [-runs N] TRACE`.
func (c *cli) shrink(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore shrink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "where to write the shrunk trace (default: TRACE with .trace replaced by .min.trace)")
	runs := fs.Int("runs", traces.DefaultShrinkRuns, "at most this many replays")
	fs.Usage = func() {
		fmt.Fprint(stderr, shrinkUsage)
		fs.PrintDefaults()
	}
	path, code, ok := verbFlags(fs, args, stderr)
	if !ok {
		return code
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "explore shrink: -runs %d: want at least 1\n", *runs)
		return exitUsage
	}
	if *out == "" {
		*out = sibling(path, ".trace", ".min.trace")
	}
	orig, sc, ok := c.loadTrace("explore shrink", path, stderr)
	if !ok {
		return exitUsage
	}
	if orig.Violation == nil {
		fmt.Fprintf(stderr, "explore shrink: %s records no violation, so there is nothing to keep while shrinking; shrink the trace of a violation (explore check writes them)\n", path)
		return exitUsage
	}
	start := time.Now()
	_, first, err := rerun(sc, orig.Faults, orig.Choices)
	if err != nil {
		fmt.Fprintf(stderr, "explore shrink: %s: %v\n", path, err)
		return exitUsage
	}
	if ok, msg := outcome(orig, first); !ok {
		fmt.Fprintf(stderr, "explore shrink: %s does not reproduce, so it cannot be shrunk: %s\n(explore check writes a fresh trace)\n", path, msg)
		return exitUsage
	}
	property := orig.Violation.Property
	var harness error
	runner := func(choices []model.Choice) (*traces.Trace, bool) {
		_, t, err := rerun(sc, orig.Faults, choices)
		if err != nil {
			if harness == nil {
				harness = err
			}
			return nil, false
		}
		return t, t.Violation != nil && t.Violation.Property == property
	}
	// Shrink the replay (same schedule as the file, with the replay's
	// current event lines), so the result is a trace of this build.
	min, stats := traces.ShrinkN(first, runner, *runs)
	if min == first { // nothing smaller: keep the file's trace as it is
		min = orig
	}
	stats.BeforeEvents, stats.BeforeChoices = len(orig.Events), len(orig.Choices)
	stats.AfterEvents, stats.AfterChoices = len(min.Events), len(min.Choices)
	elapsed := time.Since(start)
	if harness != nil {
		fmt.Fprintf(stderr, "explore shrink: warning: some candidates failed to run (ignored): %v\n", harness)
	}
	if min != orig {
		// A trace of the same scenario, rebuilt the same way.
		min.Rebuild, min.Workload = orig.Rebuild, orig.Workload
	}
	if err := traces.WriteFile(*out, min); err != nil {
		fmt.Fprintf(stderr, "explore shrink: %v; pass -o with a writable path\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: %s still breaks %s at step %d\n", *out, min.Scenario, property, min.Violation.Step)
	fmt.Fprintf(stdout, "  events  %d -> %d\n", stats.BeforeEvents, stats.AfterEvents)
	fmt.Fprintf(stdout, "  choices %d -> %d\n", stats.BeforeChoices, stats.AfterChoices)
	budget := ""
	if stats.Runs >= *runs {
		budget = " (the -runs bound; a larger -runs may shrink further)"
	}
	fmt.Fprintf(stdout, "  %d replays in %s%s\n", stats.Runs, elapsed.Round(time.Millisecond), budget)
	fmt.Fprintf(stdout, "replay it: %s\n", c.replayOf(*out))
	return exitOK
}
