package explore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/targets"
)

// -check-determinism runs every schedule twice and fails (exit 2) on any
// difference: it passes on every shipped scenario, with the exhaustive
// strategy (every explored schedule replayed from its recorded choices)
// and with the random one. Scenarios with KnownNondeterminism are left
// out (targets/kuberay checks what stays deterministic there).
func TestCheckDeterminismOnAllScenarios(t *testing.T) {
	// Scenarios that declare KnownNondeterminism (unmodified code ordering
	// its reads by map iteration) are not held to byte-identical histories.
	var names []string
	for _, sc := range targets.All() {
		if sc.KnownNondeterminism == "" {
			names = append(names, sc.Name)
		}
	}
	for _, strategy := range []string{"exhaustive", "random"} {
		args := []string{"check", "-json", "-check-determinism", "-strategy", strategy, "-schedules", "40", "-out", t.TempDir()}
		args = append(args, names...)
		code, out, errs := runCLI(t, args...)
		if code == 2 {
			t.Fatalf("%s: exit 2: %s", strategy, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(names) {
			t.Fatalf("%s: %d result lines for %d scenarios:\n%s", strategy, len(lines), len(names), out)
		}
		for _, l := range lines {
			var r Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Verdict == "error" || r.Error != "" || r.Schedules == 0 {
				t.Fatalf("%s: %+v", strategy, r)
			}
		}
	}
}

// The first acceptance command: both seed bugs found from scratch
// with the default settings (exhaustive), exit 1, a violation each; and a
// fix variant verified, exit 0.
func TestCheckDefaultFindsSeedBugsAndVerifiesFix(t *testing.T) {
	code, out, errs := runCLI(t, "check", "-out", t.TempDir(), "zookeeper/buggy", "casskop/buggy")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range [][]string{{"zookeeper/buggy", "violation", "NoScaleBelow(member StatefulSet)"}, {"casskop/buggy", "violation", "EventuallyConverges(rack matches nodesPerRacks)"}} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == want[0] && f[1] == want[1] && strings.HasPrefix(strings.Join(f[2:], " "), want[2]) {
				found = true
			}
		}
		if !found {
			t.Errorf("no table row %v:\n%s", want, out)
		}
	}
	// The search met every schedule without faults first.
	if !strings.Contains(out, "  it takes 1 fault (of 3: crashes=1 stale=1 drops=0 evictions=1), the fewest of any violating schedule: every schedule with fewer ran and broke no property") {
		t.Errorf("the zookeeper/buggy violation does not say it has the fewest faults:\n%s", out)
	}
	code, out, errs = runCLI(t, "check", "-out", t.TempDir(), "casskop/fixed")
	if code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("casskop/fixed: exit %d, want 0 and verified\n%s%s", code, out, errs)
	}
}
