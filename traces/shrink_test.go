package traces

import (
	"fmt"
	"testing"

	"github.com/opcheck/opcheck/model"
)

// fakeSystem is a system under test in miniature: it takes one step per
// choice (values clamped into range as a runner does) and breaks its
// property iff the values contain 3 and, later, 5.
func fakeSystem(runs *int) func([]model.Choice) (*Trace, bool) {
	return func(cs []model.Choice) (*Trace, bool) {
		*runs++
		tr := &Trace{Version: FormatVersion, Scenario: "fake"}
		seen3, bad := false, false
		for i, c := range cs {
			v := c.Value % c.N
			tr.Choices = append(tr.Choices, model.Choice{Kind: c.Kind, N: c.N, Value: v})
			tr.Events = append(tr.Events, fmt.Sprintf("user Workload detail=%q -> ok t=0s #%d", fmt.Sprint(v), i+1))
			if v == 3 {
				seen3 = true
			}
			if v == 5 && seen3 {
				bad = true
			}
		}
		if bad {
			tr.Violation = &Violation{Property: "No35", Step: len(tr.Events)}
		}
		return tr, bad
	}
}

func values(cs []model.Choice) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.Value
	}
	return out
}

func TestShrinkToMinimal(t *testing.T) {
	var start []model.Choice
	for _, v := range []int{1, 5, 3, 2, 7, 0, 4, 6, 5, 1, 3, 2, 5, 8, 9, 0, 0, 6} {
		start = append(start, model.Choice{Kind: model.ChooseStep, N: 10, Value: v})
	}
	runs := 0
	run := fakeSystem(&runs)
	orig, ok := run(start)
	if !ok {
		t.Fatal("the starting schedule does not violate")
	}
	before := choicesOf(orig)
	got, stats := Shrink(orig, run)
	if fmt.Sprint(values(got.Choices)) != "[3 5]" {
		t.Fatalf("shrunk to %v, want [3 5]", values(got.Choices))
	}
	if len(got.Events) != 2 || got.Violation == nil || got.Violation.Property != "No35" {
		t.Fatalf("shrunk trace: %d events, violation %+v", len(got.Events), got.Violation)
	}
	if stats.BeforeEvents != 18 || stats.AfterEvents != 2 || stats.BeforeChoices != 18 || stats.AfterChoices != 2 {
		t.Fatalf("stats %+v", stats)
	}
	if stats.Runs != runs-1 || stats.Runs > DefaultShrinkRuns {
		t.Fatalf("stats.Runs = %d, runner called %d times during shrinking", stats.Runs, runs-1)
	}
	if choicesOf(orig) != before {
		t.Fatal("Shrink modified its input trace")
	}
	// Deterministic: the same input shrinks the same way.
	again, stats2 := Shrink(orig, fakeSystem(new(int)))
	if model.FormatChoices(again.Choices) != model.FormatChoices(got.Choices) || stats2 != stats {
		t.Fatal("shrinking is not deterministic")
	}
}

func choicesOf(t *Trace) string { return model.FormatChoices(t.Choices) }

func TestShrinkPrefersFewerEvents(t *testing.T) {
	// A system whose violation needs value 2 somewhere; a choice of value 1
	// makes a run long (10 events), other values cost one event each.
	run := func(cs []model.Choice) (*Trace, bool) {
		tr := &Trace{Scenario: "fake"}
		bad := false
		add := func() {
			tr.Events = append(tr.Events, fmt.Sprintf("user Tick -> ok t=0s #%d", len(tr.Events)+1))
		}
		for _, c := range cs {
			v := c.Value % c.N
			tr.Choices = append(tr.Choices, model.Choice{Kind: c.Kind, N: c.N, Value: v})
			add()
			if v == 1 {
				for i := 0; i < 9; i++ {
					add()
				}
			}
			bad = bad || v == 2
		}
		if bad {
			tr.Violation = &Violation{Property: "No2", Step: len(tr.Events)}
		}
		return tr, bad
	}
	start := []model.Choice{{Kind: model.ChooseStep, N: 3, Value: 1}, {Kind: model.ChooseStep, N: 3, Value: 2}, {Kind: model.ChooseStep, N: 3, Value: 1}}
	orig, _ := run(start)
	got, stats := Shrink(orig, run)
	if fmt.Sprint(values(got.Choices)) != "[2]" || len(got.Events) != 1 || stats.AfterEvents != 1 || stats.BeforeEvents != 21 {
		t.Fatalf("shrunk to %v with %d events, stats %+v", values(got.Choices), len(got.Events), stats)
	}
}

func TestShrinkRejectsOtherProperty(t *testing.T) {
	// Any change makes the run break a different property: the
	// shrinker must keep the original.
	run := func(cs []model.Choice) (*Trace, bool) {
		tr := &Trace{Scenario: "fake", Choices: cs}
		for i := range cs {
			tr.Events = append(tr.Events, fmt.Sprintf("user Tick -> ok t=0s #%d", i+1))
		}
		prop := "Other"
		if fmt.Sprint(values(cs)) == "[1 2 3 4]" {
			prop = "Original"
		}
		tr.Violation = &Violation{Property: prop}
		return tr, true
	}
	start := []model.Choice{{Kind: model.ChooseStep, N: 9, Value: 1}, {Kind: model.ChooseStep, N: 9, Value: 2}, {Kind: model.ChooseStep, N: 9, Value: 3}, {Kind: model.ChooseStep, N: 9, Value: 4}}
	orig, _ := run(start)
	got, _ := Shrink(orig, run)
	if got != orig {
		t.Fatalf("shrinker accepted a run breaking another property: %v", values(got.Choices))
	}
}

func TestShrinkRunBudget(t *testing.T) {
	var start []model.Choice
	for i := 0; i < 200; i++ {
		start = append(start, model.Choice{Kind: model.ChooseStep, N: 10, Value: (i*7 + 1) % 10})
	}
	start = append(start, model.Choice{Kind: model.ChooseStep, N: 10, Value: 3}, model.Choice{Kind: model.ChooseStep, N: 10, Value: 5})
	runs := 0
	run := fakeSystem(&runs)
	orig, _ := run(start)
	runs = 0
	got, stats := ShrinkN(orig, run, 7)
	if runs != 7 || stats.Runs != 7 {
		t.Fatalf("budget 7: runner called %d times, stats.Runs %d", runs, stats.Runs)
	}
	if len(got.Events) > len(orig.Events) {
		t.Fatal("shrinking made the trace longer")
	}
}
