package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
)

// The trace format proper (parser, replay, shrink, viewer) belongs to
// package traces, which is being written separately. This writer is kept
// deliberately small until the CLI switches to it: a header line, the
// choices (model.FormatChoices), the history (History.Lines) and the
// violation (Violation.String), in that order.

// traceName is the file name of a scenario's trace: "zookeeper/buggy" ->
// "zookeeper_buggy.trace".
func traceName(scenario string) string {
	return strings.ReplaceAll(scenario, "/", "_") + ".trace"
}

// writeTrace writes the violating schedule of rep to dir atomically (temp
// file in dir, then rename) and returns its path.
func writeTrace(dir string, rep explore.Report) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# opcheck trace: scenario %s strategy %s seed %d schedule %d faults %s\n", rep.Scenario, rep.Strategy, rep.Seed, rep.Index, rep.Faults)
	fmt.Fprintf(&b, "choices: %s\n", model.FormatChoices(rep.Choices))
	if rep.History != nil {
		b.WriteString(rep.History.Lines())
	}
	if rep.Violation != nil {
		b.WriteString(rep.Violation.String())
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, traceName(rep.Scenario))
	f, err := os.CreateTemp(dir, ".trace-*")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(b.String())
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", werr
	}
	return path, nil
}
