package explore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// Check explores sc from a go test, with DefaultOptions changed by opts,
// and fails t with the violation and the recipe that replays it. A harness
// error fails t as well.
//
//	func TestMyOperator(t *testing.T) {
//		explore.Check(t, myScenario(), explore.WithSchedules(500))
//	}
func Check(t testing.TB, sc *simulator.Scenario, opts ...Option) Report {
	t.Helper()
	o := DefaultOptions()
	for _, f := range opts {
		f(&o)
	}
	rep := Explore(sc, o)
	switch rep.Verdict {
	case VerdictError:
		t.Fatalf("explore %s: %v", sc.Name, rep.Err)
	case VerdictViolation:
		t.Fatalf("%s", Recipe(rep))
	}
	return rep
}

// Recipe is the human report of a violation: the property, the step, the
// explanation, the choices and how to replay the schedule.
func Recipe(rep Report) string {
	if rep.Violation == nil {
		return rep.Scenario + ": no violation"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s violated at step %d (schedule %d of strategy %s, seed %d)\n", rep.Scenario, rep.Violation.Property, rep.Violation.Step, rep.Index, rep.Strategy, rep.Seed)
	fmt.Fprintf(&b, "%s\n", rep.Violation.String())
	if rep.Trace != "" {
		fmt.Fprintf(&b, "trace: %s\n", rep.Trace)
	}
	fmt.Fprintf(&b, "choices: %s\n", model.FormatChoices(rep.Choices))
	fmt.Fprintf(&b, "replay in Go: explore.Check(t, sc, explore.WithStrategy(%q), explore.WithSeed(%d), explore.WithSchedules(1))", rep.Strategy, rep.Seed)
	if rep.Faults != (model.FaultBudget{}) {
		fmt.Fprintf(&b, " with faults %s", rep.Faults)
	}
	b.WriteString("\n  or explore.Replay(sc, choices, faults) with the choices above")
	return b.String()
}

// FuzzSeeds is how many seed-corpus entries Fuzz adds.
const FuzzSeeds = 8

// Fuzz turns fuzzer bytes into a schedule of sc (byte i is choice i, modulo
// the number of alternatives; past the end every choice is 0) and fails on
// a violation, printing the choices. Its seed corpus is FuzzSeeds
// schedules drawn from a fixed PCG stream, plus the empty input; plain
// `go test` runs only those, `go test -fuzz` searches.
func Fuzz(f *testing.F, sc *simulator.Scenario) {
	f.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	f.Add([]byte{})
	for i := 0; i < FuzzSeeds; i++ {
		b := make([]byte, 256)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vals := make([]int, len(data))
		for i, x := range data {
			vals[i] = int(x)
		}
		res, err := simulator.Run(sc, &model.Values{Vals: vals}, simulator.RunOptions{})
		if err != nil {
			t.Fatalf("harness error in %s: %v (fix the scenario; this is not a finding)", sc.Name, err)
		}
		if len(res.Violations) > 0 {
			v := res.Violations[0]
			t.Fatalf("%s: %s\nchoices: %s\nreplay: explore.Replay(sc, choices, nil) with these choices, or rerun this fuzz target on the failing input go test saved under testdata/fuzz", sc.Name, v.String(), model.FormatChoices(res.Choices))
		}
	})
}
