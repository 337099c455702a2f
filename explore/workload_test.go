package explore

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

func TestCallFormats(t *testing.T) {
	calls := []Call{{Action: "create", Param: 2}, {Action: "policy", Param: "Retain"}, {Action: "scale", Param: int32(1)}}
	if got, want := FormatCalls(calls), "[create(2) policy(Retain) scale(1)]"; got != want {
		t.Errorf("FormatCalls = %s, want %s", got, want)
	}
	want := `[]explore.Call{{Action: "create", Param: 2}, {Action: "policy", Param: "Retain"}, {Action: "scale", Param: int32(1)}}`
	if got := GoCalls(calls); got != want {
		t.Errorf("GoCalls = %s, want %s", got, want)
	}
}

func noopStep(p any) simulator.WorkloadStep {
	return simulator.WorkloadStep{Do: func(context.Context, client.Client) error { return nil }}
}

func TestWorkloadScenario(t *testing.T) {
	base := zookeeper.Scenario(zookeeper.Buggy)
	n := len(base.Workload)
	actions := []Action{{Name: "a", Gen: gen.IntRange(1, 3), Step: noopStep}}
	sc, err := WorkloadScenario(base, actions, []Call{{Action: "a", Param: 1}, {Action: "a", Param: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Workload) != 2 || sc.Workload[0].Name != "a(1)" || sc.Workload[1].Name != "a(3)" {
		t.Errorf("workload %+v, want steps a(1) a(3)", sc.Workload)
	}
	if len(base.Workload) != n || sc.Name != base.Name || len(sc.Properties) != len(base.Properties) {
		t.Errorf("the copy changed the base or lost its fields")
	}
	if _, err := WorkloadScenario(base, actions, []Call{{Action: "b"}}); err == nil {
		t.Errorf("an unknown action gave no error")
	}
}

// The call generator draws every action and shrinks parameters within
// their generator's range, keeping the action.
func TestGenCallShrinksWithinRange(t *testing.T) {
	g, err := genCall([]Action{
		{Name: "a", Gen: gen.IntRange(2, 9), Step: noopStep},
		{Name: "b", Gen: gen.IntRange(2, 9), Step: noopStep},
	})
	if err != nil {
		t.Fatal(err)
	}
	params := gopter.DefaultTestParametersWithSeed(3)
	gp := &gopter.GenParameters{MaxSize: 10, Rng: params.Rng}
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		r := g(gp)
		v, ok := r.Retrieve()
		if !ok {
			t.Fatal("no value")
		}
		c := v.(Call)
		seen[c.Action] = true
		shrink := r.Shrinker(c)
		for s, ok := shrink(); ok; s, ok = shrink() {
			sc := s.(Call)
			if p := sc.Param.(int); sc.Action != c.Action || p < 2 || p > 9 || p == c.Param.(int) {
				t.Fatalf("%v shrank to %v", c, sc)
			}
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("actions drawn: %v, want both", seen)
	}
	if _, err := genCall([]Action{{Name: "a", Gen: gen.IntRange(1, 2), Step: noopStep}, {Name: "a", Gen: gen.IntRange(1, 2), Step: noopStep}}); err == nil {
		t.Errorf("duplicate action names gave no error")
	}
}

func TestExploreWorkloadsRejectsBadInput(t *testing.T) {
	base := zookeeper.Scenario(zookeeper.Fixed)
	if rep := ExploreWorkloads(base, nil); rep.Verdict != VerdictError {
		t.Errorf("no actions: verdict %s", rep.Verdict)
	}
	actions := []Action{{Name: "a", Gen: gen.IntRange(1, 3), Step: noopStep}}
	if rep := ExploreWorkloads(base, actions, WithWorkloadStrategy("nope")); rep.Verdict != VerdictError {
		t.Errorf("unknown strategy: verdict %s", rep.Verdict)
	}
}

// A workload step that fails with an error outside its retry policy (by
// default Conflict, AlreadyExists, NotFound) is a harness error, reported
// as such and not shrunk.
func TestExploreWorkloadsHarnessError(t *testing.T) {
	bad := []Action{{Name: "bad", Gen: gen.IntRange(1, 3), Step: func(p any) simulator.WorkloadStep {
		return simulator.WorkloadStep{Do: func(ctx context.Context, c client.Client) error {
			return apierrors.NewBadRequest("the workload sends nonsense")
		}}
	}}}
	rep := ExploreWorkloads(zookeeper.Scenario(zookeeper.Fixed), bad, WithWorkloadTests(3), WithWorkloadSchedules(1), WithWorkloadFaults(model.FaultBudget{}))
	if rep.Verdict != VerdictError || rep.Err == nil || rep.Evaluations != 1 {
		t.Fatalf("verdict %s, err %v, %d evaluations: want one evaluation and a harness error", rep.Verdict, rep.Err, rep.Evaluations)
	}
}

// The workload recipe is right for its strategy: a sampling strategy's
// schedule reruns from its seed with the budget it ran with; the exhaustive
// search's has no seed and replays from its choices.
func TestWorkloadRecipePerStrategy(t *testing.T) {
	v := &properties.Violation{Property: "P", Step: 2}
	choices := []model.Choice{{Kind: model.ChooseStep, N: 3, Value: 1}, {Kind: model.ChooseStep, N: 2, Value: 0}}
	budget := model.FaultBudget{Crashes: 1, Evictions: 2}
	rep := WorkloadReport{Scenario: "s", Verdict: VerdictViolation, Workload: []Call{{Action: "scale", Param: 2}}, Original: []Call{{Action: "scale", Param: 2}},
		Report: Report{Strategy: StrategyExhaustive, Violation: v, Choices: choices, Faults: budget, Index: 7}}
	ex := WorkloadRecipe(rep)
	if strings.Contains(ex, "WithSeed") || !strings.Contains(ex, `model.ParseChoices("step:1/3 step:0/2")`) || !strings.Contains(ex, "Crashes: 1, Stale: 0, Drops: 0, Evictions: 2") {
		t.Errorf("exhaustive workload recipe:\n%s", ex)
	}
	rep.Report.Strategy, rep.Report.Seed = StrategyRandom, 42
	rnd := WorkloadRecipe(rep)
	if !strings.Contains(rnd, `explore.WithStrategy("random"), explore.WithSeed(42), explore.WithSchedules(1), explore.WithFaults(model.FaultBudget{Crashes: 1, Stale: 0, Drops: 0, Evictions: 2})`) {
		t.Errorf("random workload recipe:\n%s", rnd)
	}
}

// A generated workload survives the trace's workload line: each parameter
// comes back with the type its action's generator produces, and a line
// this test's actions cannot rebuild is refused with the reason.
func TestWorkloadLineRoundTrip(t *testing.T) {
	actions := []Action{
		{Name: "scale", Gen: gen.IntRange(1, 3), Step: func(any) simulator.WorkloadStep { return simulator.WorkloadStep{} }},
		{Name: "label", Gen: gen.OneConstOf("a b", `q"uote`), Step: func(any) simulator.WorkloadStep { return simulator.WorkloadStep{} }},
	}
	calls := []Call{{Action: "scale", Param: 3}, {Action: "label", Param: `q"uote`}, {Action: "scale", Param: 1}}
	line, err := encodeCalls(calls)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCalls(line, actions)
	if err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	if !reflect.DeepEqual(got, calls) {
		t.Fatalf("round trip of %s: got %#v, want %#v", line, got, calls)
	}
	for _, c := range []struct{ line, want string }{
		{`[{"action":"drain","param":1}]`, `no action "drain"`},
		{`[{"action":"scale","param":"three"}]`, "does not decode as int"},
		{`{"action":"scale"}`, "not a list"},
	} {
		if _, err := decodeCalls(c.line, actions); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decode %s: error %v, want one containing %q", c.line, err, c.want)
		}
	}
	if _, err := encodeCalls([]Call{{Action: "f", Param: func() {}}}); err == nil || !strings.Contains(err.Error(), "does not encode as JSON") {
		t.Errorf("encoding a func parameter: %v, want a refusal", err)
	}
}
