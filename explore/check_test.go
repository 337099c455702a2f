package explore

import (
	"fmt"
	"strings"
	"testing"
)

// fakeTB records a Fatalf instead of ending the test.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}

func TestCheckFailsWithTheRecipe(t *testing.T) {
	// Seed 128 is the casskop/buggy schedule random exploration from seed 1
	// stops at (TestFindsSeedBugs).
	ft := &fakeTB{TB: t}
	rep := Check(ft, lookup(t, "casskop/buggy"), WithSeed(128), WithSchedules(1))
	if !ft.failed {
		t.Fatalf("Check passed a violating schedule; verdict %s", rep.Verdict)
	}
	for _, want := range []string{"casskop/buggy", "NoStuckReconcile", "at step", "choices: step:", "explore.WithSeed(128)", "explore.Replay"} {
		if !strings.Contains(ft.msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, ft.msg)
		}
	}

	ft = &fakeTB{TB: t}
	Check(ft, lookup(t, "casskop/upstream-fix"), WithSchedules(3))
	if ft.failed {
		t.Errorf("Check failed a clean exploration: %s", ft.msg)
	}
}
