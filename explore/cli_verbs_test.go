package explore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/traces"
)

// fixture is a committed, shrunk seed-bug trace (traces/testdata).
const fixture = "../traces/testdata/zookeeper_buggy.trace"

// copyFixture copies the fixture into a temporary directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatalf("%v (regenerate the fixtures: go test ./traces/ -run TestFixtures -rewrite)", err)
	}
	path := filepath.Join(t.TempDir(), "zookeeper_buggy.trace")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayReproduces(t *testing.T) {
	tr, err := traces.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "replay", fixture)
	if code != exitViolation {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	want := "reproduced: " + tr.Violation.Property + " at step " + itoa(tr.Violation.Step)
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "diverged") {
		t.Errorf("the fixture's replay diverged:\n%s", out)
	}
}

// Editing the choice that starts the fault (the last one of the shrunk
// trace: the crash) removes the bug: exit 0, and the output names the
// first event that differs.
func TestReplayEditedChoicesDoesNotReproduce(t *testing.T) {
	tr, err := traces.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	last := &tr.Choices[len(tr.Choices)-1]
	if last.Value == 0 {
		t.Fatalf("the fixture's last choice is %s; a shrunk trace ends in a non-zero choice", last)
	}
	last.Value = 0
	path := filepath.Join(t.TempDir(), "edited.trace")
	if err := traces.WriteFile(path, tr); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "replay", path)
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (the edited schedule must not break the property)\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "not reproduced: the schedule diverged at event ") {
		t.Fatalf("output does not say where the schedule diverged:\n%s", out)
	}
	// The first differing line of the trace is quoted.
	k := strings.Index(out, "diverged at event ")
	var n int
	for _, c := range out[k+len("diverged at event "):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > len(tr.Events) {
		t.Fatalf("diverged at event %d of %d:\n%s", n, len(tr.Events), out)
	}
	if !strings.Contains(out, "want "+tr.Events[n-1]+" got ") {
		t.Errorf("output lacks the recorded event %d %q:\n%s", n, tr.Events[n-1], out)
	}
}

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	malformed := filepath.Join(dir, "malformed.trace")
	os.WriteFile(malformed, []byte(strings.Replace(string(good), "\nfaults ", "\nfautls ", 1)), 0o644)
	unknown := filepath.Join(dir, "unknown.trace")
	os.WriteFile(unknown, []byte(strings.Replace(string(good), "scenario zookeeper/buggy", "scenario zookeeper/nosuch", 1)), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"malformed", []string{"replay", malformed}, []string{malformed + ": line 4: want \"rebuild COMMAND\", \"workload JSON\" or \"faults"}},
		{"unknown scenario", []string{"replay", unknown}, []string{`unknown scenario "zookeeper/nosuch"`, "zookeeper/buggy"}},
		{"missing file", []string{"replay", filepath.Join(dir, "nosuch.trace")}, []string{"no such file"}},
		{"no argument", []string{"replay"}, []string{"no trace file given"}},
		{"two arguments", []string{"replay", malformed, unknown}, []string{"want one trace file"}},
		{"shrink malformed", []string{"shrink", malformed}, []string{"line 4"}},
		{"view unknown", []string{"view", unknown}, []string{"unknown scenario"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stdout %q stderr %q", code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}

func TestShrinkVerb(t *testing.T) {
	if testing.Short() {
		t.Skip("shrinks a trace (tens of replays)")
	}
	path := copyFixture(t)
	orig, _ := traces.ReadFile(path)
	// The fixture is already shrunk: a bounded shrink keeps it a valid
	// recipe of the same property, no larger.
	code, out, errs := runCLI(t, "shrink", "-runs", "20", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	min := strings.TrimSuffix(path, ".trace") + ".min.trace"
	tr, err := traces.ReadFile(min)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tr.Violation == nil || tr.Violation.Property != orig.Violation.Property || len(tr.Events) > len(orig.Events) {
		t.Errorf("shrunk trace: %v with %d events; want %s with at most %d", tr.Violation, len(tr.Events), orig.Violation.Property, len(orig.Events))
	}
	for _, w := range []string{"events  " + itoa(len(orig.Events)) + " -> ", "choices " + itoa(len(orig.Choices)) + " -> ", "replay it: explore replay " + min} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if code, out, errs := runCLI(t, "replay", min); code != exitViolation {
		t.Errorf("replay of the shrunk trace: exit %d\n%s%s", code, out, errs)
	}
	// -o after the trace works too.
	other := filepath.Join(t.TempDir(), "sub", "x.trace")
	if code, out, errs := runCLI(t, "shrink", path, "-runs", "1", "-o", other); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(other); err != nil {
		t.Error(err)
	}
}

func TestViewVerb(t *testing.T) {
	path := copyFixture(t)
	code, out, errs := runCLI(t, "view", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	page := strings.TrimSuffix(path, ".trace") + ".html"
	lin := strings.TrimSuffix(path, ".trace") + ".lin.html"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	html := string(b)
	for _, w := range []string{`"linearizabilityHref":"zookeeper_buggy.lin.html"`, `"hasHistory":true`, "NoDeleteOfLive"} {
		if !strings.Contains(html, w) {
			t.Errorf("page lacks %s", w)
		}
	}
	if fi, err := os.Stat(lin); err != nil || fi.Size() == 0 {
		t.Errorf("linearizability page %s: %v", lin, err)
	}
	// -o chooses the page; the linearizability page goes next to it.
	out2 := filepath.Join(t.TempDir(), "v.html")
	if code, out, errs := runCLI(t, "view", "-o", out2, path); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out2), "v.lin.html")); err != nil {
		t.Error(err)
	}
}

func itoa(n int) string {
	s := ""
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
