package main

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/traces"
)

// traceName is the file name of a scenario's trace: "zookeeper/buggy" ->
// "zookeeper_buggy.trace".
func traceName(scenario string) string {
	return strings.ReplaceAll(scenario, "/", "_") + ".trace"
}

// writeTrace writes the violating schedule of rep to dir as a trace file
// (package traces: atomic, parseable, replayable) and returns its path.
func writeTrace(dir string, rep explore.Report) (string, error) {
	t := traces.FromRun(rep.Scenario, rep.Faults, rep.Choices, rep.History, rep.Violation)
	path := filepath.Join(dir, traceName(rep.Scenario))
	if err := traces.WriteFile(path, t); err != nil {
		return "", err
	}
	return path, nil
}

// replayCommand is the recipe line that replays rep's violating schedule:
// the replay verb on its trace file, or, when no trace could be written,
// the check command that reruns the schedule from its seed.
func replayCommand(rep explore.Report, faultFlags []string) string {
	if rep.Trace != "" {
		return "go run ./cmd/explore replay " + rep.Trace
	}
	cmd := []string{"go run ./cmd/explore check -strategy", rep.Strategy, "-seed", strconv.FormatUint(rep.Seed, 10), "-schedules 1"}
	cmd = append(cmd, faultFlags...)
	cmd = append(cmd, rep.Scenario)
	return strings.Join(cmd, " ")
}
