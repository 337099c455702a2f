package simulator_test

import (
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// A property that asks ground truth for a kind the scheme does not know
// (a typo) stops the run with a harness error naming the kind, instead of
// holding vacuously; and the panic, though raised while a reconcile's API
// call was being recorded, is not reported as the reconciler's panic.
func TestPropertyPanicIsHarnessError(t *testing.T) {
	sc := webScenario()
	sc.Properties = append(sc.Properties, properties.EventuallyConverges("Typo", func(s *properties.State) (bool, string) {
		return len(s.List("Webapp", "", nil)) > 0, "no WebApp"
	}))
	res, err := simulator.Run(sc, &model.Values{}, simulator.RunOptions{})
	if err == nil {
		t.Fatalf("a property asking for the unknown kind Webapp ran to the end; violations %v", res.Violations)
	}
	for _, want := range []string{`unknown kind "Webapp"`, "did you mean WebApp?", "a property panicked", "fix the property"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(res.History.Lines(), " Panic ") {
		t.Errorf("the property's panic was recorded as a reconciler panic:\n%s", res.History.Lines())
	}
}

// CaughtUp is recorded once, after Settle, when no informer has an event
// left to receive: NoStuckReconcile counts failures only from there.
func TestCaughtUpRecordedAfterSettleOnce(t *testing.T) {
	res, err := simulator.Run(webScenario(), &model.Values{}, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	settle, caught, n := 0, 0, 0
	for _, e := range res.History.Events {
		switch e.Op {
		case model.OpSettle:
			settle = e.Step
		case model.OpCaughtUp:
			caught = e.Step
			n++
		}
	}
	if settle == 0 || n != 1 || caught < settle {
		t.Fatalf("want one CaughtUp after Settle (step %d), got %d, the last at step %d:\n%s", settle, n, caught, res.History.Lines())
	}
}
