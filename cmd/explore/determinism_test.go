package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/targets"
)

// -check-determinism runs every schedule twice and fails (exit 2) on any
// difference: it passes on every shipped scenario, with the exhaustive
// strategy (every explored schedule replayed from its recorded choices)
// and with the random one.
func TestCheckDeterminismOnAllScenarios(t *testing.T) {
	for _, strategy := range []string{"exhaustive", "random"} {
		args := []string{"check", "-json", "-check-determinism", "-strategy", strategy, "-schedules", "40", "-out", t.TempDir()}
		args = append(args, targets.Names()...)
		code, out, errs := runCLI(t, args...)
		if code == 2 {
			t.Fatalf("%s: exit 2: %s", strategy, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(targets.Names()) {
			t.Fatalf("%s: %d result lines for %d scenarios:\n%s", strategy, len(lines), len(targets.Names()), out)
		}
		for _, l := range lines {
			var r result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Verdict == "error" || r.Error != "" || r.Schedules == 0 {
				t.Fatalf("%s: %+v", strategy, r)
			}
		}
	}
}
