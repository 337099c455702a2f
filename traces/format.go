package traces

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// FormatVersion is the version of the trace format this package writes and
// the only one it reads.
const FormatVersion = 1

// OpcheckVersion is written on the "opcheck" line of traces made by FromRun.
// The command line may set it at start-up from its build information.
var OpcheckVersion = "v0.1.0"

// header is the first line of every trace file, without the version digits.
const header = "opcheck-trace v"

// choicesPerLine is how many choices one "choices" line holds; longer
// streams are wrapped over several lines.
const choicesPerLine = 20

// Trace is one run as a trace file stores it.
type Trace struct {
	// Version is the format version (FormatVersion; 0 is written as it).
	Version int
	// Scenario names what ran, e.g. "zookeeper/buggy".
	Scenario string
	// OpcheckVersion is the opcheck that wrote the trace.
	OpcheckVersion string
	// Rebuild says how to get a program that knows Scenario, for a
	// scenario that is not opcheck's own: "go build PACKAGE" (a main
	// package that calls explore.Main) or "go test PACKAGE -run PATTERN"
	// (a test that calls explore.Check). Empty when not recorded (an
	// optional line of the format).
	Rebuild string
	// Workload is the generated workload the run executed instead of the
	// scenario's own (explore.CheckWorkloads), as JSON: a list of
	// {"action": NAME, "param": VALUE}. Empty for a run of the scenario's
	// own workload (an optional line of the format). Only a program that
	// has the workload's actions can run such a trace again: the
	// CheckWorkloads test on the rebuild line.
	Workload string
	// Faults is the fault budget the run had.
	Faults model.FaultBudget
	// Choices is the choice stream; replaying it reproduces the run.
	Choices []model.Choice
	// Events holds the Event.Line of each step, in order.
	Events []string
	// Violation is what the run broke, nil for a run that broke nothing.
	Violation *Violation
}

// Violation is a broken property as a trace stores it.
type Violation struct {
	Property  string `json:"property"`
	Statement string `json:"statement"`
	// Step is the step of the offending event.
	Step int `json:"step"`
	// Explanation holds the explanation, one element per line.
	Explanation []string `json:"explanation"`
	// Related lists the steps of the other events the verdict depends on.
	Related []int `json:"related"`
}

// FromRun makes the trace of one run: what ran, with which budget and
// choices, what happened, and the violation v (nil for none).
func FromRun(scenario string, faults model.FaultBudget, choices []model.Choice, h *model.History, v *properties.Violation) *Trace {
	t := &Trace{
		Version:        FormatVersion,
		Scenario:       scenario,
		OpcheckVersion: OpcheckVersion,
		Faults:         faults,
	}
	if len(choices) > 0 {
		t.Choices = append([]model.Choice(nil), choices...)
	}
	if h != nil {
		for i := range h.Events {
			t.Events = append(t.Events, h.Events[i].Line())
		}
	}
	if v != nil {
		tv := &Violation{
			Property:  oneLine(v.Property),
			Statement: oneLine(v.Statement),
			Step:      v.Step,
		}
		expl := strings.ReplaceAll(v.Explanation, "\r\n", "\n")
		expl = strings.TrimRight(expl, "\n")
		if expl != "" {
			for _, l := range strings.Split(expl, "\n") {
				tv.Explanation = append(tv.Explanation, strings.TrimRight(l, "\r"))
			}
		}
		if len(v.Related) > 0 {
			tv.Related = append([]int(nil), v.Related...)
		}
		t.Violation = tv
	}
	return t
}

// oneLine folds line breaks into spaces, for fields a trace keeps on one
// line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

// Validate reports the first reason t cannot be written as a trace file
// that parses back to t, or nil.
func (t *Trace) Validate() error {
	if t.Version != 0 && t.Version != FormatVersion {
		return fmt.Errorf("trace format v%d is not supported by this opcheck (v%d)", t.Version, FormatVersion)
	}
	if err := singleLine("scenario", t.Scenario); err != nil {
		return err
	}
	if err := singleLine("opcheck version", t.OpcheckVersion); err != nil {
		return err
	}
	if err := singleLine("rebuild", t.Rebuild); err != nil {
		return err
	}
	if err := validWorkload(t.Workload); err != nil {
		return err
	}
	if err := validBudget(t.Faults); err != nil {
		return err
	}
	for i, c := range t.Choices {
		if _, err := model.ParseChoice(c.String()); err != nil {
			return fmt.Errorf("choice %d: %w", i+1, err)
		}
	}
	for i, l := range t.Events {
		if err := checkEventLine(l, i); err != nil {
			return fmt.Errorf("event %d: %w", i+1, err)
		}
	}
	if v := t.Violation; v != nil {
		if v.Property == "" {
			return fmt.Errorf("violation: the property name is empty")
		}
		if err := singleLine("violation property", v.Property); err != nil {
			return err
		}
		if err := singleLine("violation statement", v.Statement); err != nil {
			return err
		}
		if err := checkStep(v.Step, len(t.Events)); err != nil {
			return fmt.Errorf("violation step: %w", err)
		}
		for i, l := range v.Explanation {
			if err := singleLine("explanation line "+strconv.Itoa(i+1), l); err != nil {
				return err
			}
		}
		for _, s := range v.Related {
			if err := checkStep(s, len(t.Events)); err != nil {
				return fmt.Errorf("violation related step: %w", err)
			}
		}
	}
	return nil
}

// singleLine refuses a field that would break the line structure.
func singleLine(what, s string) error {
	if strings.ContainsAny(s, "\r\n") {
		return fmt.Errorf("%s %q holds a line break; a trace keeps it on one line", what, s)
	}
	return nil
}

func validBudget(b model.FaultBudget) error {
	if b.Crashes < 0 || b.Stale < 0 || b.Drops < 0 || b.Evictions < 0 {
		return fmt.Errorf("fault budget %s: every count must be >= 0", b)
	}
	return nil
}

// checkStep accepts a step of an event of a history of n events (any step
// >= 0 when the trace holds no events).
func checkStep(s, n int) error {
	if s < 0 {
		return fmt.Errorf("step %d is negative", s)
	}
	if n > 0 && s > n {
		return fmt.Errorf("step %d is after the last event (#%d)", s, n)
	}
	return nil
}

// checkEventLine parses an event line and checks it is step i+1.
func checkEventLine(l string, i int) error {
	el, err := ParseEventLine(l)
	if err != nil {
		return err
	}
	if el.Step != i+1 {
		return fmt.Errorf("event line %q is step #%d, want #%d (events are stored in step order from 1)", l, el.Step, i+1)
	}
	return nil
}

// validWorkload checks a trace's workload line: empty, or one line of JSON.
func validWorkload(w string) error {
	if w == "" {
		return nil
	}
	if err := singleLine("workload", w); err != nil {
		return err
	}
	if !json.Valid([]byte(w)) {
		return fmt.Errorf("workload: not JSON: %.60q", w)
	}
	return nil
}
