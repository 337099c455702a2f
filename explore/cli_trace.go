package explore

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/traces"
)

// traceName is the file name of a scenario's trace: "zookeeper/buggy" ->
// "zookeeper_buggy.trace".
func traceName(scenario string) string {
	return strings.ReplaceAll(scenario, "/", "_") + ".trace"
}

// writeTrace writes the violating schedule of rep to dir as a trace file
// (package traces: atomic, parseable, replayable) that records rebuild,
// and returns its path.
func writeTrace(dir string, rep Report, rebuild string) (string, error) {
	t := traces.FromRun(rep.Scenario, rep.Faults, rep.Choices, rep.History, rep.Violation)
	t.Rebuild, t.Workload = rebuild, rep.Workload
	name := traceName(rep.Scenario)
	switch {
	case rep.Workload != "":
		// Beside, not over, the trace Check writes for the same scenario.
		name = strings.TrimSuffix(name, ".trace") + ".workload.trace"
	case rep.Strategy == StrategyFuzz:
		name = strings.TrimSuffix(name, ".trace") + ".fuzz.trace"
	}
	path := filepath.Join(dir, name)
	if err := traces.WriteFile(path, t); err != nil {
		return "", err
	}
	return path, nil
}

// replayOf is the command that replays the trace at path with this
// program.
func (c *cli) replayOf(path string) string {
	if c.replayTrace != nil {
		return c.replayTrace(path)
	}
	return c.prog + " replay " + shellQuote(path)
}

// replayElsewhere is the command that replays the trace at path with the
// program its rebuild line names, or "" when it names none.
func replayElsewhere(rebuild, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	switch {
	case strings.HasPrefix(rebuild, "go test "):
		return testVerb(rebuild, "replay", abs)
	case strings.HasPrefix(rebuild, "go build "):
		pkg := strings.TrimPrefix(rebuild, "go build ")
		bin := "opcheck-" + filepath.Base(pkg)
		return "go build -o " + bin + " " + pkg + " && ./" + bin + " replay " + shellQuote(abs)
	}
	return ""
}

// shellQuote quotes s for sh when it holds anything but plain path
// characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// replayCommand is the recipe line that replays rep's violating schedule:
// the replay verb on its trace file, or, when no trace could be written,
// the check command that reruns a sampling strategy's schedule from its
// seed ("" for the exhaustive search, which has no seed).
func (c *cli) replayCommand(rep Report, faultFlags []string) string {
	if rep.Trace != "" {
		return c.replayOf(rep.Trace)
	}
	if rep.Strategy == StrategyExhaustive {
		return ""
	}
	cmd := []string{c.prog, "check -strategy", rep.Strategy, "-seed", strconv.FormatUint(rep.Seed, 10), "-schedules 1"}
	cmd = append(cmd, faultFlags...)
	cmd = append(cmd, rep.Scenario)
	return strings.Join(cmd, " ")
}
