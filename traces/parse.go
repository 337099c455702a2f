package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/opcheck/opcheck/model"
)

// maxLine bounds one line of a trace file.
const maxLine = 64 << 20

// parse states: what the next line may be.
const (
	stHeader    = iota // the "opcheck-trace v1" line
	stScenario         // scenario
	stOpcheck          // opcheck
	stFaults           // rebuild, workload (both optional) or faults
	stChoices          // choices, event, violation or end
	stEvents           // event, violation or end
	stStatement        // statement
	stStep             // step
	stExplain          // explanation, related or end
	stEnd              // end
	stDone             // nothing but comments and blank lines
)

var want = [...]string{
	stHeader:    fmt.Sprintf("the header %q", header+strconv.Itoa(FormatVersion)),
	stScenario:  `"scenario NAME"`,
	stOpcheck:   `"opcheck VERSION"`,
	stFaults:    `"rebuild COMMAND", "workload JSON" or "faults crashes=N stale=N drops=N evictions=N"`,
	stChoices:   `"choices ...", "event ...", "violation PROPERTY" or "end"`,
	stEvents:    `"event ...", "violation PROPERTY" or "end"`,
	stStatement: `"statement TEXT"`,
	stStep:      `"step N"`,
	stExplain:   `"explanation TEXT", "related N ..." or "end"`,
	stEnd:       `"end"`,
	stDone:      "nothing after \"end\" (only blank lines and # comments)",
}

// Parse reads a trace file. Errors name the line and what was expected
// there: "line 7: want "step N", got "explanation ..."".
func Parse(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	t := &Trace{}
	st := stHeader
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if st == stHeader {
			if err := parseHeader(line); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			t.Version = FormatVersion
			st = stScenario
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		kw, val, _ := strings.Cut(line, " ")
		cur := st // what this line may be; st moves on below
		bad := func(err error) error {
			if err == nil {
				return fmt.Errorf("line %d: want %s, got %s", n, want[cur], got(line))
			}
			return fmt.Errorf("line %d: want %s, got %s: %w", n, want[cur], got(line), err)
		}
		var err error
		switch {
		case st == stScenario && kw == "scenario":
			t.Scenario, st = val, stOpcheck
		case st == stOpcheck && kw == "opcheck":
			t.OpcheckVersion, st = val, stFaults
		case st == stFaults && kw == "rebuild" && t.Rebuild == "" && val != "":
			t.Rebuild = val
		case st == stFaults && kw == "workload" && t.Workload == "" && val != "":
			t.Workload, err = val, validWorkload(val)
		case st == stFaults && kw == "faults":
			t.Faults, err = model.ParseFaultBudget(val)
			st = stChoices
		case st == stChoices && kw == "choices":
			var cs []model.Choice
			cs, err = model.ParseChoices(val)
			t.Choices = append(t.Choices, cs...)
		case (st == stChoices || st == stEvents) && kw == "event":
			err = checkEventLine(val, len(t.Events))
			t.Events = append(t.Events, val)
			st = stEvents
		case (st == stChoices || st == stEvents) && kw == "violation":
			if val == "" {
				err = errors.New("the property name is empty")
			}
			t.Violation = &Violation{Property: val}
			st = stStatement
		case st == stStatement && kw == "statement":
			t.Violation.Statement, st = val, stStep
		case st == stStep && kw == "step":
			t.Violation.Step, err = parseStep(val, len(t.Events))
			st = stExplain
		case st == stExplain && kw == "explanation":
			t.Violation.Explanation = append(t.Violation.Explanation, val)
		case st == stExplain && kw == "related":
			for _, f := range strings.Fields(val) {
				var s int
				if s, err = parseStep(f, len(t.Events)); err != nil {
					break
				}
				t.Violation.Related = append(t.Violation.Related, s)
			}
			st = stEnd
		case (st == stChoices || st == stEvents || st == stExplain || st == stEnd) && kw == "end" && val == "":
			st = stDone
		default:
			return nil, bad(nil)
		}
		if err != nil {
			return nil, bad(err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d MiB; not a trace file?", n+1, maxLine>>20)
		}
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if st != stDone {
		return nil, fmt.Errorf("line %d: want %s, got the end of the file (the trace is truncated: it has no \"end\" line)", n+1, want[st])
	}
	return t, nil
}

// parseHeader checks the first line and its format version.
func parseHeader(line string) error {
	rest, ok := strings.CutPrefix(line, header)
	if !ok {
		return fmt.Errorf("want %s, got %s (not an opcheck trace file?)", want[stHeader], got(line))
	}
	v, err := strconv.Atoi(rest)
	if err != nil || v < 0 || strconv.Itoa(v) != rest {
		return fmt.Errorf("want %s, got %s", want[stHeader], got(line))
	}
	if v != FormatVersion {
		return fmt.Errorf("trace format v%d is not supported by this opcheck (v%d); re-run the exploration with this version to regenerate it", v, FormatVersion)
	}
	return nil
}

// parseStep reads a step number of a trace with n events.
func parseStep(s string, n int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("step %q is not a number", s)
	}
	return v, checkStep(v, n)
}

// got quotes a line for an error message, shortened when long.
func got(line string) string {
	const max = 80
	if len(line) > max {
		cut := max
		for cut > 0 && !isRuneStart(line[cut]) {
			cut--
		}
		return strconv.Quote(line[:cut]) + "..."
	}
	return strconv.Quote(line)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
