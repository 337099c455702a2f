package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opcheck/opcheck/model"
)

// Write writes t as a trace file. It refuses (before writing anything) a
// trace that would not parse back to itself; see Trace.Validate.
func Write(w io.Writer, t *Trace) error {
	if t == nil {
		return errors.New("traces: write: nil trace")
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("traces: write: %w", err)
	}
	bw := bufio.NewWriter(w)
	line := func(keyword, value string) {
		bw.WriteString(keyword)
		if value != "" {
			bw.WriteByte(' ')
			bw.WriteString(value)
		}
		bw.WriteByte('\n')
	}
	line(header+strconv.Itoa(FormatVersion), "")
	line("scenario", t.Scenario)
	line("opcheck", t.OpcheckVersion)
	if t.Rebuild != "" {
		line("rebuild", t.Rebuild)
	}
	if t.Workload != "" {
		line("workload", t.Workload)
	}
	line("faults", t.Faults.String())
	line("#", strconv.Itoa(len(t.Choices))+" choices; replay feeds them back in order (out-of-range values are clamped, then 0)")
	for i := 0; i < len(t.Choices); i += choicesPerLine {
		end := min(i+choicesPerLine, len(t.Choices))
		line("choices", model.FormatChoices(t.Choices[i:end]))
	}
	line("#", strconv.Itoa(len(t.Events))+" events, one per step, as Event.Line renders them")
	for _, e := range t.Events {
		line("event", e)
	}
	if v := t.Violation; v != nil {
		line("#", "the property this run breaks")
		line("violation", v.Property)
		line("statement", v.Statement)
		line("step", strconv.Itoa(v.Step))
		for _, l := range v.Explanation {
			line("explanation", l)
		}
		if len(v.Related) > 0 {
			var b []byte
			for i, s := range v.Related {
				if i > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendInt(b, int64(s), 10)
			}
			line("related", string(b))
		}
	}
	line("end", "")
	return bw.Flush()
}

// WriteFile writes t to path atomically: into a temporary file in the same
// directory, then renamed over path. Missing parent directories are
// created. On error, path is left as it was.
func WriteFile(path string, t *Trace) (err error) {
	if t == nil {
		return fmt.Errorf("%s: nil trace", path)
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeFileAtomic(path, func(w io.Writer) error { return Write(w, t) })
}

// writeFileAtomic writes path through a temporary file in its directory.
func writeFileAtomic(path string, fill func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: create directory: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadFile reads and parses the trace file at path. Errors name the path.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError already names the path
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
