package explore

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/targets"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, &out, &errb, targets.All()...)
	return code, out.String(), errb.String()
}

func TestList(t *testing.T) {
	code, out, _ := runCLI(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := strings.Fields(out)
	if strings.Join(got, " ") != strings.Join(targets.Names(), " ") {
		t.Errorf("list printed %v, want %v", got, targets.Names())
	}
	// The five scenarios of the issue, in this relative order.
	want := []string{"zookeeper/buggy", "zookeeper/upstream-fix", "zookeeper/fixed", "casskop/buggy", "casskop/upstream-fix"}
	i := 0
	for _, name := range got {
		if i < len(want) && name == want[i] {
			i++
		}
	}
	if i != len(want) {
		t.Errorf("list printed %v, want %v among them in this order", got, want)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown scenario", []string{"check", "-out", dir, "nosuch/thing"}, "zookeeper/buggy"},
		{"no scenario", []string{"check", "-out", dir}, "no scenario given"},
		{"flag after a scenario", []string{"check", "-out", dir, "zookeeper/fixed", "-time", "3s"}, "-time comes after a scenario name, where it is read as one: put every flag before the scenario names"},
		{"bad flag", []string{"check", "-nosuchflag", "zookeeper/buggy"}, "nosuchflag"},
		{"bad schedules", []string{"check", "-schedules", "zero", "zookeeper/buggy"}, "schedules"},
		{"bad shard", []string{"check", "-shard", "3/3", "-out", dir, "zookeeper/buggy"}, "0 <= I < N"},
		{"negative budget", []string{"check", "-crashes", "-1", "-out", dir, "zookeeper/buggy"}, "crashes"},
		{"negative time", []string{"check", "-time", "-1s", "-out", dir, "zookeeper/buggy"}, "-time"},
		{"unknown strategy", []string{"check", "-strategy", "dfs", "-out", dir, "zookeeper/buggy"}, "unknown strategy"},
		{"unwritable out", []string{"check", "-schedules", "1", "-out", filepath.Join(file, "sub"), "zookeeper/buggy"}, "writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stdout %q stderr %q", code, out, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q does not say %q", errs, tc.want)
			}
		})
	}
}

func TestCheckFindsZookeeperBug(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "check", "-strategy", "random", "-seed", "1", "-out", dir, "zookeeper/buggy")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (violation); stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	trace := filepath.Join(dir, "zookeeper_buggy.trace")
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatalf("trace file: %v\nstdout:\n%s", err, out)
	}
	text := string(b)
	for _, want := range []string{"opcheck-trace v1\nscenario zookeeper/buggy\n", "\nchoices step:", "controller/zookeeper-operator", "\nviolation No"} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
	for _, want := range []string{"violation", trace, "replay: explore replay " + trace + "   (exit 1: it reproduces)\n", "at step"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temp files left in -out: %v", leftovers)
	}

	// The replay command reproduces the same violation.
	code, out2, errs := runCLI(t, "replay", trace)
	if code != 1 || !strings.Contains(out2, "reproduced: ") {
		t.Fatalf("replay %s: exit %d, want 1\n%s%s", trace, code, out2, errs)
	}
}

func TestCheckJSONAndShard(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "check", "-strategy", "random", "-json", "-schedules", "4", "-shard", "1/2", "-crashes", "0", "-out", dir, "casskop/upstream-fix")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var r Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if r.Scenario != "casskop/upstream-fix" || r.Verdict != "inconclusive" || r.Schedules != 2 || r.States < 1 {
		t.Errorf("got %+v, want casskop/upstream-fix inconclusive over 2 schedules (shard 1/2 of 4)", r)
	}
}
