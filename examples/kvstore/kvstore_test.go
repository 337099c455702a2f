package kvstore_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/opcheck/opcheck/examples/kvstore"
	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/traces"
)

// Step 6: explore. Check fails the test with the violation and the recipe
// that replays it. Its default strategy is the exhaustive search of the
// scenario's bounded space, so a correct operator is verified.
func TestKVStore(t *testing.T) {
	rep := explore.Check(t, kvstore.Scenario(kvstore.Correct))
	if rep.Verdict != explore.VerdictVerified {
		t.Fatalf("want the bounded space verified, got verdict %s after %d schedules", rep.Verdict, rep.Schedules)
	}
	t.Logf("verified: %d schedules, %d states, %s", rep.Schedules, rep.States, rep.Elapsed)
}

// The broken variant must be caught: a test that opcheck still finds the bug
// it was built to find.
func TestKVStoreBrokenIsCaught(t *testing.T) {
	rep := explore.Explore(kvstore.Scenario(kvstore.Broken), explore.DefaultOptions())
	if rep.Verdict != explore.VerdictViolation {
		t.Fatalf("broken variant: want verdict %q, got %q after %d schedules (err %v)", explore.VerdictViolation, rep.Verdict, rep.Schedules, rep.Err)
	}
	if rep.Violation.Property != kvstore.PropNoDelete {
		t.Fatalf("broken variant: want %s violated, got %s", kvstore.PropNoDelete, explore.Recipe(rep))
	}
	t.Logf("caught after %d schedules:\n%s", rep.Schedules, explore.Recipe(rep))
	// The recipe replays: the recorded choices give the same violation.
	res, err := explore.Replay(kvstore.Scenario(kvstore.Broken), rep.Choices, &rep.Faults)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != kvstore.PropNoDelete {
		t.Fatalf("replay of the recorded choices: want %s violated, got %v", kvstore.PropNoDelete, res.Violations)
	}
}

// Step 7: commit a violation as a regression fixture. The trace replays
// byte for byte as long as the reconciler and the scenario behave the
// same; regenerate it with
//
//	go -C examples/kvstore test . -run TestBrokenFixture -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite testdata/broken.trace from a fresh exploration")

const fixture = "testdata/broken.trace"

func TestBrokenFixture(t *testing.T) {
	sc := kvstore.Scenario(kvstore.Broken)
	if *rewrite {
		rep := explore.Explore(sc, explore.DefaultOptions())
		if rep.Violation == nil {
			t.Fatalf("no violation to record: %s", rep.Verdict)
		}
		tr := traces.FromRun(sc.Name, rep.Faults, rep.Choices, rep.History, rep.Violation)
		if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := traces.WriteFile(fixture, tr); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := traces.ReadFile(fixture)
	if err != nil {
		t.Fatalf("%v (regenerate with -rewrite)", err)
	}
	if tr.Violation == nil || tr.Violation.Property != kvstore.PropNoDelete {
		t.Fatalf("%s records %v, want a %s violation", fixture, tr.Violation, kvstore.PropNoDelete)
	}
	res, err := explore.Replay(sc, tr.Choices, &tr.Faults)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != kvstore.PropNoDelete || res.Violations[0].Step != tr.Violation.Step {
		t.Fatalf("replaying %s: got %v, want %s at step %d", fixture, res.Violations, kvstore.PropNoDelete, tr.Violation.Step)
	}
	// Byte for byte: every event line of the replay is the fixture's.
	got := traces.FromRun(sc.Name, tr.Faults, res.Choices, res.History, nil)
	if i, want, line, same := traces.Diff(tr.Events, got.Events); !same {
		t.Fatalf("replaying %s diverged at event %d:\nwant %s\ngot  %s\n(if the change in behaviour is meant, regenerate with -rewrite)", fixture, i+1, want, line)
	}
	// Against the correct operator the same recorded schedule either
	// diverges (the operator makes other calls) or runs without violation.
	if res, err := explore.Replay(kvstore.Scenario(kvstore.Correct), tr.Choices, &tr.Faults); err == nil && len(res.Violations) > 0 {
		t.Fatalf("the broken variant's schedule breaks the correct one too: %v", res.Violations[0].String())
	}
}

// Step 8: fuzz. Plain go test runs the seed corpus; go test -fuzz=FuzzKVStore
// ./examples/kvstore/ searches.
func FuzzKVStore(f *testing.F) { explore.Fuzz(f, kvstore.Scenario(kvstore.Correct)) }
