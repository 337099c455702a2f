package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"
)

// merged is one scenario's combined result: an Result without a
// shard, with ShardsSeen of Shards present.
type merged struct {
	Result
	ShardsSeen, Shards int

	verdicts []string
	seen     map[int]string // shard -> where it was read (file:line)
	// explored is the fewest faults_explored of the lines; unexplored: a
	// line had none (a sampling strategy, or a result written before the
	// field existed).
	explored   int
	unexplored bool
}

// result is the merged line as JSON.
func (m *merged) result() Result {
	r := m.Result
	r.Shard, r.Shards, r.ShardsSeen = nil, &m.Shards, &m.ShardsSeen
	return r
}

// inputError is input merge cannot use: the file, the line (0: the whole
// file) and what is wrong.
type inputError struct {
	file string
	line int
	msg  string
}

func (e *inputError) Error() string {
	if e.line == 0 {
		return e.file + ": " + e.msg
	}
	return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
}

// mergeCmd is `explore merge [-shards N] [-json] [-html FILE] RESULT...`.
func mergeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shards := fs.Int("shards", 0, "how many shards the run was split into (default: the shards the lines name, else one shard per RESULT file)")
	jsonOut := fs.Bool("json", false, "print one merged JSON object per scenario instead of the table")
	htmlOut := fs.String("html", "", "also write a self-contained HTML report of the merged verdicts to this `FILE` (written atomically)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: explore merge [flags] RESULT...\n(RESULT: a file of `explore check -json` output, one per shard)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "explore merge: no RESULT file given; pass the files `explore check -json -shard I/N` wrote, e.g. explore merge results/*.json")
		return exitUsage
	}
	if *shards < 0 {
		fmt.Fprintf(stderr, "explore merge: -shards %d: want N >= 1\n", *shards)
		return exitUsage
	}
	rs, err := mergeFiles(fs.Args(), *shards)
	if err != nil {
		fmt.Fprintf(stderr, "explore merge: %v\n", err)
		return exitUsage
	}
	status := exitOK
	for _, m := range rs {
		switch m.Verdict {
		case VerdictViolation:
			status = exitViolation
		case VerdictError:
			if status == exitOK {
				status = exitUsage
			}
		}
	}
	if *htmlOut != "" {
		if err := writeReport(*htmlOut, fs.Args(), rs, status); err != nil {
			fmt.Fprintf(stderr, "explore merge: cannot write the HTML report: %v; pass -html with a file in a writable directory\n", err)
			return exitUsage
		}
	}
	if *jsonOut {
		for _, m := range rs {
			b, _ := json.Marshal(m.result())
			fmt.Fprintf(stdout, "%s\n", b)
		}
		return status
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tVERDICT\tPROPERTY\tSHARDS\tSCHEDULES\tSTATES\tTIME\tTRACE")
	for _, m := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%s\t%s\n", m.Scenario, m.Verdict, dash(m.Property), m.ShardsSeen, m.Shards, m.Schedules, m.States, time.Duration(m.ElapsedMS)*time.Millisecond, dash(m.Trace))
	}
	tw.Flush()
	for _, m := range rs {
		if m.Error != "" {
			fmt.Fprintf(stderr, "\n%s: error: %s\n", m.Scenario, m.Error)
		}
		if m.Verdict == VerdictInconclusive && m.FaultsExplored != nil {
			if n := *m.FaultsExplored; n >= 0 {
				fmt.Fprintf(stdout, "\n%s: inconclusive: %s was explored, in every shard, and none broke a property\n", m.Scenario, schedulesUpTo(n))
			} else {
				fmt.Fprintf(stdout, "\n%s: inconclusive: not even the schedule without faults was explored in every shard\n", m.Scenario)
			}
		}
	}
	return status
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mergeFiles reads every file and merges per scenario, in the order the
// scenarios first appear. n is the shard count (0: from the lines, else
// the number of files).
func mergeFiles(files []string, n int) ([]*merged, error) {
	type line struct {
		r     Result
		where string
		file  int
	}
	var lines []line
	named := -1 // the shard count the lines name, -1 none yet
	given := map[string]bool{}
	for fi, name := range files {
		if given[filepath.Clean(name)] {
			return nil, &inputError{file: name, msg: "given twice: pass each shard's result once"}
		}
		given[filepath.Clean(name)] = true
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, &inputError{file: name, msg: fmt.Sprintf("cannot read: %v", err)}
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		found := false
		for ln := 1; sc.Scan(); ln++ {
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 {
				continue
			}
			var r Result
			if err := json.Unmarshal(text, &r); err != nil {
				return nil, &inputError{file: name, line: ln, msg: fmt.Sprintf("not a result of `explore check -json`: %v", err)}
			}
			if err := validResult(&r); err != nil {
				return nil, &inputError{file: name, line: ln, msg: err.Error()}
			}
			if (r.Shard == nil) != (r.Shards == nil) {
				return nil, &inputError{file: name, line: ln, msg: "a line names either both shard and shards or neither"}
			}
			if r.Shards != nil {
				if *r.Shards < 1 || *r.Shard < 0 || *r.Shard >= *r.Shards {
					return nil, &inputError{file: name, line: ln, msg: fmt.Sprintf("shard %d/%d: want 0 <= shard < shards", *r.Shard, *r.Shards)}
				}
				if named >= 0 && named != *r.Shards {
					return nil, &inputError{file: name, line: ln, msg: fmt.Sprintf("shards %d, but earlier lines say %d: these results are from different runs", *r.Shards, named)}
				}
				named = *r.Shards
			}
			lines = append(lines, line{r: r, where: fmt.Sprintf("%s:%d", name, ln), file: fi})
			found = true
		}
		if err := sc.Err(); err != nil {
			return nil, &inputError{file: name, msg: fmt.Sprintf("cannot read: %v", err)}
		}
		if !found {
			return nil, &inputError{file: name, msg: "no result in it (an empty file: did that shard run?)"}
		}
	}
	switch {
	case n > 0 && named > 0 && n != named:
		return nil, fmt.Errorf("-shards %d, but the results say %d shards", n, named)
	case n == 0 && named > 0:
		n = named
	case n == 0:
		n = len(files)
	}
	byName := map[string]*merged{}
	var order []*merged
	for _, l := range lines {
		m := byName[l.r.Scenario]
		if m == nil {
			m = &merged{Result: Result{Scenario: l.r.Scenario, Strategy: l.r.Strategy}, Shards: n, seen: map[int]string{}}
			byName[l.r.Scenario] = m
			order = append(order, m)
		}
		shard := l.file
		if l.r.Shard != nil {
			shard = *l.r.Shard
		}
		if shard >= n {
			return nil, fmt.Errorf("%s: %s is the result of shard %d, but the run has %d shards (pass -shards N, or one file per shard)", l.where, l.r.Scenario, shard, n)
		}
		if prev, dup := m.seen[shard]; dup {
			return nil, fmt.Errorf("%s: %s: shard %d/%d again (first at %s): pass each shard's result once", l.where, l.r.Scenario, shard, n, prev)
		}
		m.seen[shard] = l.where
		m.ShardsSeen++
		m.Schedules += l.r.Schedules
		m.States += l.r.States
		m.Pruned += l.r.Pruned
		m.Steps += l.r.Steps
		m.Reexplored += l.r.Reexplored
		m.Replayed += l.r.Replayed
		m.Resumed += l.r.Resumed
		m.MonitorReplayed += l.r.MonitorReplayed
		m.Reconciles += l.r.Reconciles
		m.ElapsedMS = max(m.ElapsedMS, l.r.ElapsedMS)
		m.verdicts = append(m.verdicts, l.r.Verdict)
		if l.r.Verdict == VerdictViolation && m.Property == "" {
			m.Property, m.Trace, m.Replay = l.r.Property, l.r.Trace, l.r.Replay
		}
		if l.r.Error != "" && m.Error == "" {
			m.Error = l.r.Error
		}
		if l.r.Cut != "" && m.Cut == "" {
			m.Cut = l.r.Cut
		}
		switch f := l.r.FaultsExplored; {
		case f == nil:
			m.unexplored = true
		case m.ShardsSeen == 1 || *f < m.explored:
			m.explored = *f
		}
	}
	for _, m := range order {
		m.Verdict = mergeVerdicts(m.verdicts, m.ShardsSeen == m.Shards)
		if !m.unexplored {
			// Every shard explored its share up to its own count; a
			// shard missing explored nothing anyone can vouch for.
			n := m.explored
			if m.ShardsSeen < m.Shards {
				n = -1
			}
			m.FaultsExplored = &n
		}
	}
	return order, nil
}

// mergeVerdicts: violation if any shard violated; else error if any shard
// failed; verified only if every shard is present and verified; otherwise
// inconclusive.
func mergeVerdicts(vs []string, complete bool) string {
	has := map[string]bool{}
	for _, v := range vs {
		has[v] = true
	}
	switch {
	case has[VerdictViolation]:
		return VerdictViolation
	case has[VerdictError]:
		return VerdictError
	case complete && len(has) == 1 && has[VerdictVerified]:
		return VerdictVerified
	}
	return VerdictInconclusive
}

func validResult(r *Result) error {
	if r.Scenario == "" {
		return errors.New(`no "scenario": not a result of explore check -json`)
	}
	switch r.Verdict {
	case VerdictViolation, VerdictVerified, VerdictInconclusive, VerdictError:
	default:
		return fmt.Errorf("scenario %s: unknown verdict %q (want %s, %s, %s or %s)", r.Scenario, r.Verdict, VerdictViolation, VerdictVerified, VerdictInconclusive, VerdictError)
	}
	if r.Schedules < 0 || r.States < 0 || r.ElapsedMS < 0 {
		return fmt.Errorf("scenario %s: negative schedules, states or elapsed_ms", r.Scenario)
	}
	return nil
}
