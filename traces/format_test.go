package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
)

func writeString(t *testing.T, tr *Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, tr); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	full, _ := sampleTrace(t)
	noViolation := FromRun("casskop/fixed", model.FaultBudget{Drops: 2}, nil, sampleHistory(), nil)
	empty := &Trace{Version: 1, Scenario: "empty"}
	bare := &Trace{Scenario: "s", Violation: &Violation{Property: "P", Step: 0}}
	rebuilt := &Trace{Scenario: "kv/broken", Rebuild: "go test example.com/kv -run '^TestKV$'"}
	workload := &Trace{Scenario: "kv/broken", Rebuild: "go test example.com/kv -run '^TestKVWorkloads$'", Workload: `[{"action":"put","param":2},{"action":"scale","param":"x y"}]`}
	for name, tr := range map[string]*Trace{"full": full, "no-violation": noViolation, "empty": empty, "bare-violation": bare, "rebuild": rebuilt, "workload": workload} {
		t.Run(name, func(t *testing.T) {
			first := writeString(t, tr)
			parsed, err := Parse(strings.NewReader(first))
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, first)
			}
			second := writeString(t, parsed)
			if first != second {
				t.Fatalf("Write -> Parse -> Write differs:\n--- first\n%s\n--- second\n%s", first, second)
			}
			want := *tr
			want.Version = FormatVersion
			if !reflect.DeepEqual(parsed, &want) {
				t.Fatalf("parsed trace differs:\n got %#v\nwant %#v", parsed, &want)
			}
		})
	}
}

func TestWriteShape(t *testing.T) {
	tr, h := sampleTrace(t)
	out := writeString(t, tr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "opcheck-trace v1" || lines[len(lines)-1] != "end" {
		t.Fatalf("header or end missing:\n%s", out)
	}
	if n := strings.Count(out, "\nchoices "); n != 3 {
		t.Errorf("47 choices should be wrapped over 3 lines of <= 20, got %d lines", n)
	}
	if n := strings.Count(out, "\nevent "); n != len(h.Events) {
		t.Errorf("want %d event lines, got %d", len(h.Events), n)
	}
	// The multi-line panic detail stays on its event line, escaped.
	if !strings.Contains(out, `detail="panic: boom\n\tzk/reconciler.go:42\n{braces} # hash \"quotes\" ünïcødé"`) {
		t.Errorf("panic detail not escaped on one line:\n%s", out)
	}
	for _, want := range []string{
		"scenario zookeeper/buggy\n", "faults crashes=1 stale=1 drops=0 evictions=1\n",
		"violation NoDeleteOfLive(ConfigMap)\n", "step 11\n", "related 9 10\n",
		"explanation it decided from a stale read at step 10 (cache at rev 2, store at rev 4)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteRefusesBrokenTraces(t *testing.T) {
	for name, tr := range map[string]*Trace{
		"newline in scenario": {Scenario: "a\nb"},
		"newline in event":    {Scenario: "s", Events: []string{"user Tick -> ok t=0s #1\nend"}},
		"event out of order":  {Scenario: "s", Events: []string{"user Tick -> ok t=0s #2"}},
		"future version":      {Version: 2, Scenario: "s"},
		"bad choice":          {Scenario: "s", Choices: []model.Choice{{Kind: model.ChooseStep, N: 2, Value: 5}}},
		"empty property":      {Scenario: "s", Violation: &Violation{}},
		"step past the end":   {Scenario: "s", Events: []string{"user Tick -> ok t=0s #1"}, Violation: &Violation{Property: "P", Step: 2}},
		"negative budget":     {Scenario: "s", Faults: model.FaultBudget{Crashes: -1}},
		"newline in rebuild":  {Scenario: "s", Rebuild: "go test\nend"},
		"workload not JSON":   {Scenario: "s", Workload: "[put(1)]"},
		"newline in workload": {Scenario: "s", Workload: "[1,\n2]"},
	} {
		var b bytes.Buffer
		if err := Write(&b, tr); err == nil {
			t.Errorf("%s: Write succeeded:\n%s", name, b.String())
		} else if b.Len() != 0 {
			t.Errorf("%s: Write wrote %d bytes before failing", name, b.Len())
		}
	}
}

const validTrace = `opcheck-trace v1
scenario zookeeper/buggy
opcheck v0.1.0
faults crashes=1 stale=0 drops=0 evictions=0
choices step:3/7 step:0/5 step:1/2
# a comment
event user Create ConfigMap default/zk -> rv=2 added (apiserver-1) t=0s #1
event controller/zk Get ConfigMap default/zk -> rv=2 (apiserver-2, cache at rev 1, stale) t=1s #2
violation P
statement a statement
step 2
explanation why
related 1
end
`

func TestParseErrors(t *testing.T) {
	// replace returns validTrace with its line n (1-based) replaced.
	replace := func(n int, with string) string {
		ls := strings.Split(validTrace, "\n")
		ls[n-1] = with
		return strings.Join(ls, "\n")
	}
	cases := []struct {
		name, in, want string
	}{
		{"empty file", "", `line 1: want the header "opcheck-trace v1", got the end of the file`},
		{"missing header", strings.SplitN(validTrace, "\n", 2)[1], `line 1: want the header "opcheck-trace v1", got "scenario zookeeper/buggy" (not an opcheck trace file?)`},
		{"wrong version", replace(1, "opcheck-trace v2"), "line 1: trace format v2 is not supported by this opcheck (v1); re-run the exploration with this version to regenerate it"},
		{"garbled version", replace(1, "opcheck-trace vX"), `line 1: want the header "opcheck-trace v1", got "opcheck-trace vX"`},
		{"unknown keyword", replace(6, "frobnicate 3"), `line 6: want "choices ...", "event ...", "violation PROPERTY" or "end", got "frobnicate 3"`},
		{"missing scenario", replace(2, "# no scenario"), `line 3: want "scenario NAME", got "opcheck v0.1.0"`},
		{"bad choice", replace(5, "choices step:3/7 step:9/5"), `line 5: want "choices ...", "event ...", "violation PROPERTY" or "end", got "choices step:3/7 step:9/5": choice 2: choice "step:9/5": VALUE and N must be integers with 0 <= VALUE < N`},
		{"bad choice kind", replace(5, "choices walk:1/2"), `line 5: want "choices ...", "event ...", "violation PROPERTY" or "end", got "choices walk:1/2": choice 1: choice "walk:1/2": unknown choice kind "walk"`},
		{"bad fault budget", replace(4, "faults crashes=one"), `line 4: want "rebuild COMMAND", "workload JSON" or "faults crashes=N stale=N drops=N evictions=N", got "faults crashes=one": fault budget "crashes=one": want NAME=N with N >= 0`},
		{"workload not JSON", replace(4, "workload [put(1)]"), `line 4: want "rebuild COMMAND", "workload JSON" or "faults crashes=N stale=N drops=N evictions=N", got "workload [put(1)]": workload: not JSON`},
		{"workload after faults", replace(5, `workload [{"action":"put","param":1}]`), `line 5: want "choices ...", "event ...", "violation PROPERTY" or "end", got "workload`},
		{"unknown fault", replace(4, "faults meteors=1"), `unknown fault "meteors"`},
		{"rebuild after faults", replace(5, "rebuild go test x"), `line 5: want "choices ...", "event ...", "violation PROPERTY" or "end", got "rebuild go test x"`},
		{"empty rebuild", replace(3, "rebuild"), `line 3: want "opcheck VERSION", got "rebuild"`},
		{"violation without step", replace(11, "explanation why not"), `line 11: want "step N", got "explanation why not"`},
		{"non-numeric step", replace(11, "step eleven"), `line 11: want "step N", got "step eleven": step "eleven" is not a number`},
		{"step past the end", replace(11, "step 9"), `line 11: want "step N", got "step 9": step 9 is after the last event (#2)`},
		{"bad related", replace(13, "related 1 x"), `line 13: want "explanation TEXT", "related N ..." or "end", got "related 1 x": step "x" is not a number`},
		{"corrupt event", replace(7, "event user Create ConfigMap default/zk rv=2"), `line 7: want "choices ...", "event ...", "violation PROPERTY" or "end", got "event user Create ConfigMap default/zk rv=2": event line column`},
		{"event step out of order", replace(8, "event controller/zk Get ConfigMap default/zk -> rv=2 t=1s #5"), `is step #5, want #2`},
		{"choices after events", replace(8, "choices step:0/1"), `line 8: want "event ...", "violation PROPERTY" or "end", got "choices step:0/1"`},
		{"empty property", replace(9, "violation"), `line 9: want "event ...", "violation PROPERTY" or "end", got "violation": the property name is empty`},
		{"truncated", strings.Join(strings.Split(validTrace, "\n")[:12], "\n"), `line 13: want "explanation TEXT", "related N ..." or "end", got the end of the file (the trace is truncated: it has no "end" line)`},
		{"after end", validTrace + "event x\n", `line 15: want nothing after "end"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Parse(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", tr)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
		})
	}
	if _, err := Parse(strings.NewReader(validTrace)); err != nil {
		t.Fatalf("the valid trace of the table does not parse: %v", err)
	}
	// Windows line endings and a byte order mark are tolerated.
	crlf := "\ufeff" + strings.ReplaceAll(validTrace, "\n", "\r\n")
	a, err1 := Parse(strings.NewReader(crlf))
	b, err2 := Parse(strings.NewReader(validTrace))
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("CRLF trace parses differently: %v %v", err1, err2)
	}
}

func TestWriteFileReadFile(t *testing.T) {
	tr, _ := sampleTrace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "bug.trace")
	if err := WriteFile(path, tr); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Fatalf("ReadFile(WriteFile(t)) != t")
	}
	// A failed write leaves the old file and no temporary behind.
	if err := WriteFile(path, &Trace{Scenario: "x\ny"}); err == nil {
		t.Fatal("WriteFile accepted a broken trace")
	}
	if again, err := ReadFile(path); err != nil || !reflect.DeepEqual(again, tr) {
		t.Fatalf("old file damaged by a failed write: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("want only the trace in %s, got %d entries", filepath.Dir(path), len(ents))
	}
	// Parse errors name the file.
	bad := filepath.Join(dir, "bad.trace")
	os.WriteFile(bad, []byte("opcheck-trace v1\nscenario s\nopcheck v\nfaults\nstep 3\n"), 0o644)
	if _, err := ReadFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": line 5: ") {
		t.Fatalf("want an error prefixed with the path and line 5, got %v", err)
	}
}

func TestParseEventLine(t *testing.T) {
	h := sampleHistory()
	extra := []model.Event{
		{Actor: "zookeeper", Op: model.OpExternal, Kind: "zookeeper", Detail: "reconfig remove 3"},
		{Actor: model.ActorUser, Op: model.OpGet, Kind: "ConfigMap", Name: "cluster scoped", Err: "NotFound: \"cluster scoped\""},
		{Actor: model.ActorUser, Op: model.OpList, Kind: "Pod", Versions: []model.Version{{Name: "ns/a@b", Rev: 3}, {Name: "ns/[x]", Rev: 4}}},
		{Actor: "odd actor", Op: "->", Kind: "-", Name: "detail=\"x\""},
		{Actor: model.ActorFault, Op: model.OpCrash, Name: "-"},
	}
	for i := range extra {
		extra[i].Step = 100 + i
		extra[i].Time = model.Time(1234)
	}
	for _, e := range append(h.Events, extra...) {
		line := e.Line()
		el, err := ParseEventLine(line)
		if err != nil {
			t.Errorf("ParseEventLine(%q): %v", line, err)
			continue
		}
		if el.Actor != string(e.Actor) || el.Op != string(e.Op) || el.Kind != e.Kind || el.Key != e.Key() ||
			el.Detail != e.Detail || el.Err != e.Err || el.Step != e.Step || el.Time != e.Time.String() {
			t.Errorf("ParseEventLine(%q) = %+v: fields differ from the event", line, el)
		}
		isRead := e.Op.IsRead()
		if el.Stale != (e.Stale && isRead && e.Server > 0) || el.Server != e.Server || (isRead && e.Server > 0 && el.CacheRev != e.ReadRev) {
			t.Errorf("ParseEventLine(%q): server/stale fields %+v", line, el)
		}
		if e.Op == model.OpList && e.Err == "" && !reflect.DeepEqual(el.Versions, append([]model.Version{}, e.Versions...)) {
			t.Errorf("ParseEventLine(%q): versions %v, want %v", line, el.Versions, e.Versions)
		}
		if e.Change != model.ChangeNone && el.Change != e.Change.String() {
			t.Errorf("ParseEventLine(%q): change %q", line, el.Change)
		}
	}
	for _, bad := range []string{
		"", "user", "user Get", "user Get -> ok", "user Get -> ok t=1s", "user Get -> ok t=1s #",
		"user Get -> ok t=1s #1 trailing", "user Get a b c -> ok t=0s #1", "user Get -> maybe t=0s #1",
		`user Get detail="x -> ok t=0s #1`, "user Get -> ok (apiserver-0) t=0s #1", "user Get -> [a] t=0s #1",
		"user Get - -> ok t=0s #1", "user  Get -> ok t=0s #1", "user Get -> ok t=1.s #1",
	} {
		if el, err := ParseEventLine(bad); err == nil {
			t.Errorf("ParseEventLine(%q) accepted it: %+v", bad, el)
		}
	}
}

func TestDiff(t *testing.T) {
	a := []string{"x #1", "y #2", "z #3"}
	if i, _, _, same := Diff(a, append([]string(nil), a...)); !same || i != -1 {
		t.Fatalf("identical lines reported different at %d", i)
	}
	if i, w, g, same := Diff(a, []string{"x #1", "Y #2", "z #3"}); same || i != 1 || w != "y #2" || g != "Y #2" {
		t.Fatalf("got %d %q %q %v", i, w, g, same)
	}
	if i, w, g, same := Diff(a, a[:2]); same || i != 2 || w != "z #3" || g != "" {
		t.Fatalf("shorter replay: got %d %q %q %v", i, w, g, same)
	}
	if i, w, g, same := Diff(nil, a[:1]); same || i != 0 || w != "" || g != "x #1" {
		t.Fatalf("longer replay: got %d %q %q %v", i, w, g, same)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(validTrace)
	var b bytes.Buffer
	h := sampleHistory()
	tr := FromRun("zookeeper/buggy", model.FaultBudget{Crashes: 1}, sampleChoices(), h, sampleViolation(h))
	if err := Write(&b, tr); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	f.Add("opcheck-trace v1\nscenario s\nopcheck\nfaults\nend\n")
	f.Add("opcheck-trace v2\n")
	f.Add(strings.Replace(validTrace, "step 2", "step x", 1))
	f.Add(strings.Replace(validTrace, "-> rv=2", "->", 1))
	f.Add("opcheck-trace v1\nscenario s\nopcheck v\nfaults crashes=1\nevent \"a b\" X - \"k\\\"\" detail=\"\\n\" -> [\"a b\"@1] added (apiserver-1, cache at rev 0, stale) t=0.5s #1\nend")
	f.Fuzz(func(t *testing.T, in string) {
		t1, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		var w1 bytes.Buffer
		if err := Write(&w1, t1); err != nil {
			t.Fatalf("a parsed trace does not write: %v\ninput:\n%q", err, in)
		}
		t2, err := Parse(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("a written trace does not parse: %v\n%s", err, w1.String())
		}
		if !reflect.DeepEqual(t1, t2) {
			t.Fatalf("re-parsed trace differs:\n%#v\n%#v", t1, t2)
		}
		var w2 bytes.Buffer
		if err := Write(&w2, t2); err != nil || w1.String() != w2.String() {
			t.Fatalf("Write is not stable: %v", err)
		}
	})
}

// A line that parses but that model.Event.Line could not have written is
// refused, naming the column and what the writer would put there: the
// parser and the writer cannot drift apart silently.
func TestParseEventLineRefusesWhatLineCannotWrite(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		// A Get answers with rv=, never ok.
		{`controller/zk Get ConfigMap default/a -> ok t=0s #1`, `column 42: model.Event.Line would write "rv=0 t=0s #1"`},
		// A crash answers ok, never with a revision.
		{`fault Crash - controller/zk -> rv=3 t=0s #2`, `column 32: model.Event.Line would write "ok t=0s #2"`},
		// Line writes a write's cache revision nowhere.
		{`user Create ConfigMap default/a -> rv=3 added (apiserver-1, cache at rev 2) t=0s #3`, `column 59: model.Event.Line would write ") t=0s #3"`},
		// Line writes 1.5s, not 1.50s.
		{`clock Advance -> ok t=1.50s #4`, `column 26: model.Event.Line would write "s #4"`},
	} {
		_, err := ParseEventLine(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEventLine(%q) = %v; want an error containing %q", tc.line, err, tc.want)
		}
	}
}
