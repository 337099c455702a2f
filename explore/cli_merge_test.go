package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildExplore builds this command once into a temporary directory.
func buildExplore(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go binary on PATH to build the explore command with")
	}
	bin := filepath.Join(t.TempDir(), "explore")
	cmd := exec.Command(gobin, "build", "-o", bin, "../cmd/explore")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBin runs the built command with stdout to a file (when out is not
// empty) and returns its exit code and stderr.
func runBin(t *testing.T, bin, out string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), errb.String()
	}
	t.Fatalf("%s %v: %v", bin, args, err)
	return -1, ""
}

func readResults(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		rs = append(rs, m)
	}
	return rs
}

// Three shards run as three processes merge to what one unsharded run
// reports: the same verdict and the same number of schedules.
func TestMergeShardsMatchesUnsharded(t *testing.T) {
	bin := buildExplore(t)
	dir := t.TempDir()
	const scenario = "zookeeper/fixed"
	common := []string{"check", "-strategy", "random", "-schedules", "60", "-json", "-out", filepath.Join(dir, "traces")}
	var files []string
	for i := 0; i < 3; i++ {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		args := append(append([]string{}, common...), "-shard", fmt.Sprintf("%d/3", i), scenario)
		if code, stderr := runBin(t, bin, f, args...); code != 0 {
			t.Fatalf("shard %d exited %d: %s", i, code, stderr)
		}
		files = append(files, f)
	}
	whole := filepath.Join(dir, "whole.json")
	if code, stderr := runBin(t, bin, whole, append(append([]string{}, common...), scenario)...); code != 0 {
		t.Fatalf("unsharded run exited %d: %s", code, stderr)
	}
	merged := filepath.Join(dir, "merged.json")
	if code, stderr := runBin(t, bin, merged, append([]string{"merge", "-json"}, files...)...); code != 0 {
		t.Fatalf("merge exited %d: %s", code, stderr)
	}
	want, got := readResults(t, whole), readResults(t, merged)
	if len(want) != 1 || len(got) != 1 {
		t.Fatalf("want one result each, got unsharded %v, merged %v", want, got)
	}
	// The shards ran the unsharded run's schedules between them, so the
	// sums of their steps and reconciles are its own.
	for _, k := range []string{"scenario", "verdict", "schedules", "steps", "reconciles"} {
		if fmt.Sprint(got[0][k]) != fmt.Sprint(want[0][k]) {
			t.Errorf("%s: merged %v, unsharded %v", k, got[0][k], want[0][k])
		}
	}
	if n, _ := want[0]["reconciles"].(float64); n < 60 {
		t.Errorf("the unsharded run reports %v reconciles over 60 schedules", want[0]["reconciles"])
	}
	if got[0]["schedules"] != float64(60) || got[0]["shards_seen"] != float64(3) || got[0]["shards"] != float64(3) {
		t.Errorf("merged %v: want 60 schedules from 3 of 3 shards", got[0])
	}
	// Each shard ran its own share: no shard ran them all.
	for _, f := range files {
		if r := readResults(t, f); len(r) != 1 || r[0]["schedules"] == float64(60) {
			t.Errorf("%s: %v, want one result with a share of the 60 schedules", f, r)
		}
	}
	// The table names the scenario and the shard count.
	table := filepath.Join(dir, "table.txt")
	if code, stderr := runBin(t, bin, table, append([]string{"merge"}, files...)...); code != 0 {
		t.Fatalf("merge (table) exited %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(table)
	if !strings.Contains(string(b), scenario) || !strings.Contains(string(b), "3/3") {
		t.Errorf("table:\n%s\nwant %s with shards 3/3", b, scenario)
	}
	// Two of three shards are not the whole run: never verified.
	if code, _ := runBin(t, bin, merged, append([]string{"merge", "-json", "-shards", "3"}, files[:2]...)...); code != 0 {
		t.Fatalf("merge of 2 of 3 shards exited %d", code)
	}
	if r := readResults(t, merged); r[0]["shards_seen"] != float64(2) || r[0]["verdict"] == "verified" {
		t.Errorf("2 of 3 shards merged to %v", r[0])
	}
}

func writeLines(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergeViolationExits1(t *testing.T) {
	dir := t.TempDir()
	a := writeLines(t, dir, "0.json",
		`{"scenario":"zookeeper/buggy","verdict":"inconclusive","schedules":10,"states":4,"elapsed_ms":30}`,
		`{"scenario":"zookeeper/fixed","verdict":"verified","schedules":7,"states":3,"elapsed_ms":5}`)
	b := writeLines(t, dir, "1.json",
		`{"scenario":"zookeeper/buggy","verdict":"violation","property":"NoDeleteOfLive(member PVC)","schedules":3,"states":2,"elapsed_ms":50,"trace":"out/zookeeper_buggy.trace"}`,
		`{"scenario":"zookeeper/fixed","verdict":"verified","schedules":8,"states":5,"elapsed_ms":9}`)
	code, out, errs := runCLI(t, "merge", "-json", a, b)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d (stderr %s)", code, exitViolation, errs)
	}
	got := map[string]merged{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m merged
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		got[m.Scenario] = m
	}
	bug := got["zookeeper/buggy"]
	if bug.Verdict != "violation" || bug.Property != "NoDeleteOfLive(member PVC)" || bug.Trace != "out/zookeeper_buggy.trace" || bug.Schedules != 13 || bug.States != 6 || bug.ElapsedMS != 50 {
		t.Errorf("zookeeper/buggy merged to %+v", bug)
	}
	if fixed := got["zookeeper/fixed"]; fixed.Verdict != "verified" || fixed.Schedules != 15 || fixed.ElapsedMS != 9 {
		t.Errorf("zookeeper/fixed merged to %+v, want verified with 15 schedules", fixed)
	}
	// The same verified shard alone out of two is inconclusive.
	if code, out, _ := runCLI(t, "merge", "-shards", "2", a); code != exitOK || !strings.Contains(out, "inconclusive") || strings.Contains(out, "verified") {
		t.Errorf("one verified shard of 2: exit %d\n%s", code, out)
	}
}

func TestMergeUnreadableInputExits2(t *testing.T) {
	dir := t.TempDir()
	good := writeLines(t, dir, "good.json", `{"scenario":"zookeeper/fixed","verdict":"inconclusive","schedules":20,"states":9,"elapsed_ms":100}`)
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"corrupt.json", []string{`{"scenario":"zookeeper/fixed","verdict":"inconclusive","schedules":20,"states":9,"elapsed_ms":100}`, `{"scenario": "zookeeper/fi`}, "corrupt.json:2:"},
		{"noscenario.json", []string{`{"verdict":"inconclusive"}`}, "noscenario.json:1:"},
		{"badverdict.json", []string{``, `{"scenario":"x","verdict":"maybe"}`}, "badverdict.json:2:"},
		{"empty.json", []string{``}, "empty.json: no result"},
	} {
		p := writeLines(t, dir, tc.name, tc.lines...)
		code, out, errs := runCLI(t, "merge", good, p)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %q", tc.name, code, errs, exitUsage, tc.want)
		}
		if out != "" {
			t.Errorf("%s: printed a table from unreadable input:\n%s", tc.name, out)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if code, _, errs := runCLI(t, "merge", good, missing); code != exitUsage || !strings.Contains(errs, "missing.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "merge", good, good); code != exitUsage || !strings.Contains(errs, "twice") {
		t.Errorf("the same shard twice: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "merge"); code != exitUsage || !strings.Contains(errs, "no RESULT") {
		t.Errorf("no file: exit %d, stderr %q", code, errs)
	}
}

func TestMergeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		vs       []string
		complete bool
		want     string
	}{
		{[]string{"verified", "verified"}, true, "verified"},
		{[]string{"verified", "verified"}, false, "inconclusive"},
		{[]string{"verified", "inconclusive"}, true, "inconclusive"},
		{[]string{"inconclusive", "violation"}, false, "violation"},
		{[]string{"error", "verified"}, true, "error"},
		{[]string{"error", "violation"}, true, "violation"},
	} {
		if got := mergeVerdicts(tc.vs, tc.complete); got != tc.want {
			t.Errorf("mergeVerdicts(%v, complete=%v) = %s, want %s", tc.vs, tc.complete, got, tc.want)
		}
	}
}

// Lines that name their shard are placed by it, whatever the file order.
func TestMergeShardFields(t *testing.T) {
	dir := t.TempDir()
	a := writeLines(t, dir, "a.json", `{"scenario":"s","verdict":"verified","schedules":1,"states":1,"elapsed_ms":1,"shard":1,"shards":2}`)
	b := writeLines(t, dir, "b.json", `{"scenario":"s","verdict":"verified","schedules":2,"states":1,"elapsed_ms":1,"shard":0,"shards":2}`)
	if code, out, errs := runCLI(t, "merge", a, b); code != exitOK || !strings.Contains(out, "verified") || !strings.Contains(out, "2/2") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	c := writeLines(t, dir, "c.json", `{"scenario":"s","verdict":"verified","schedules":2,"states":1,"elapsed_ms":1,"shard":1,"shards":2}`)
	if code, _, errs := runCLI(t, "merge", a, c); code != exitUsage || !strings.Contains(errs, "c.json:1") {
		t.Errorf("shard 1 twice: exit %d, stderr %q", code, errs)
	}
}

// -html writes a self-contained report next to the table: both scenarios,
// the totals and the exit status, a relative link to the trace, and every
// string from the results escaped.
func TestMergeHTMLReport(t *testing.T) {
	dir := t.TempDir()
	evil := `zk/<script>alert(1)</script>`
	res := writeLines(t, dir, "results.json",
		`{"scenario":"zookeeper/buggy","verdict":"violation","property":"NoDeleteOfLive(member PVC)","schedules":3,"states":2,"elapsed_ms":50,"trace":"`+filepath.ToSlash(filepath.Join(dir, "traces", "zookeeper_buggy.trace"))+`"}`,
		`{"scenario":"`+strings.ReplaceAll(evil, `/`, `\/`)+`","verdict":"verified","schedules":8,"states":5,"elapsed_ms":9}`)
	report := filepath.Join(dir, "out", "report.html")
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "merge", "-html", report, res)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d (stderr %s)", code, exitViolation, errs)
	}
	if !strings.Contains(out, "zookeeper/buggy") || !strings.Contains(out, evil) {
		t.Errorf("-html dropped the table on stdout:\n%s", out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		"zookeeper/buggy", "NoDeleteOfLive(member PVC)", "violation", "verified",
		"zk/&lt;script&gt;alert(1)&lt;/script&gt;",
		`href="../traces/zookeeper_buggy.trace"`,
		"exit status 1", "2 scenarios", "11 schedules",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("report has an unescaped <script:\n%s", page)
	}
	for _, bad := range []string{"http://", "https://", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("report loads %q: it must be self-contained", bad)
		}
	}
	// Atomic: only the report is left in its directory, no temporary file.
	if ents, _ := os.ReadDir(filepath.Dir(report)); len(ents) != 1 {
		t.Errorf("report directory holds %v, want only report.html", ents)
	}

	// Verified only: exit 0, and the header says so; the report is replaced.
	ok := writeLines(t, dir, "ok.json", `{"scenario":"zookeeper/fixed","verdict":"verified","schedules":8,"states":5,"elapsed_ms":9}`)
	if code, _, errs := runCLI(t, "merge", "-json", "-html", report, ok); code != exitOK {
		t.Fatalf("verified only: exit %d (%s)", code, errs)
	}
	if b, _ := os.ReadFile(report); !strings.Contains(string(b), "exit status 0") || strings.Contains(string(b), "zookeeper/buggy") {
		t.Errorf("report of a verified run:\n%s", b)
	}
	// A report that cannot be written is a harness error.
	if code, _, errs := runCLI(t, "merge", "-html", filepath.Join(dir, "nosuchdir", "r.html"), ok); code != exitUsage || !strings.Contains(errs, "HTML report") {
		t.Errorf("unwritable report: exit %d, stderr %q", code, errs)
	}
	// Unusable input writes no report.
	bad := writeLines(t, dir, "bad.json", `{"scenario":"x","verdict":"maybe"}`)
	fresh := filepath.Join(dir, "fresh.html")
	if code, _, _ := runCLI(t, "merge", "-html", fresh, bad); code != exitUsage {
		t.Errorf("bad input: exit %d", code)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("bad input wrote a report (%v)", err)
	}
}

// What make nightly does, with a small budget: check -json into
// results.json, then merge -html into report.html next to it. 200 random
// schedules: with seed 0, the first that catches zookeeper/buggy is
// schedule 64 (30 schedules find nothing).
func TestNightlyCheckThenMergeHTML(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.json")
	// Random sampling needs a few hundred schedules for the zookeeper seed
	// bug (654 from the default seed since watch events are delivered one
	// per step).
	code, out, errs := runCLI(t, "check", "-json", "-strategy", "random", "-schedules", "1000", "-out", filepath.Join(dir, "traces"), "zookeeper/buggy", "zookeeper/fixed")
	if code != exitViolation {
		t.Fatalf("check exited %d, want %d (zookeeper/buggy caught)\n%s", code, exitViolation, errs)
	}
	if err := os.WriteFile(results, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.html")
	code, _, errs = runCLI(t, "merge", "-html", report, results)
	if code != exitViolation {
		t.Fatalf("merge exited %d, want %d\n%s", code, exitViolation, errs)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"zookeeper/buggy", "zookeeper/fixed", "exit status 1", `href="traces/zookeeper_buggy.trace"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q:\n%s", want, page)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "traces", "zookeeper_buggy.trace")); err != nil {
		t.Errorf("the linked trace: %v", err)
	}
}
