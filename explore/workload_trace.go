package explore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/leanovate/gopter"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// callJSON is one call of a generated workload as a trace's workload line
// records it.
type callJSON struct {
	Action string          `json:"action"`
	Param  json.RawMessage `json:"param"`
}

// encodeCalls renders a generated workload for a trace's workload line:
// [{"action":"put","param":2}, ...]. A parameter must encode as JSON.
func encodeCalls(calls []Call) (string, error) {
	out := make([]callJSON, len(calls))
	for i, c := range calls {
		p, err := json.Marshal(c.Param)
		if err != nil {
			return "", fmt.Errorf("workload step %d, %s: its parameter (%T) does not encode as JSON, so no trace can record it: %w", i+1, c, c.Param, err)
		}
		out[i] = callJSON{Action: c.Action, Param: p}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// decodeCalls reads a trace's workload line back into calls of actions.
// Each parameter is decoded into the type its action's generator
// produces (one sample of Gen tells it), so Step gets what it got when
// the trace was written.
func decodeCalls(workload string, actions []Action) ([]Call, error) {
	var raw []callJSON
	if err := json.Unmarshal([]byte(workload), &raw); err != nil {
		return nil, fmt.Errorf("the trace's workload line is not a list of {action, param}: %w", err)
	}
	byName := map[string]*Action{}
	for i := range actions {
		byName[actions[i].Name] = &actions[i]
	}
	calls := make([]Call, len(raw))
	for i, r := range raw {
		a, ok := byName[r.Action]
		if !ok {
			return nil, fmt.Errorf("workload step %d: no action %q among this test's actions; replay the trace with the test that wrote it (its rebuild line)", i+1, r.Action)
		}
		sample, ok := sampleOf(a.Gen)
		if !ok {
			return nil, fmt.Errorf("workload step %d: action %q's generator gave no sample to learn its parameter type from", i+1, r.Action)
		}
		p := reflect.New(reflect.TypeOf(sample))
		if err := json.Unmarshal(r.Param, p.Interface()); err != nil {
			return nil, fmt.Errorf("workload step %d: parameter %s of action %q does not decode as %T: %w", i+1, r.Param, r.Action, sample, err)
		}
		calls[i] = Call{Action: r.Action, Param: p.Elem().Interface()}
	}
	return calls, nil
}

// checkWorkloadTrace is CheckWorkloads under -opcheck.replay, -view or
// -shrink: a trace of a generated workload of base runs on that workload,
// rebuilt from the trace's workload line with this test's actions; a trace
// of base's own workload runs as Check runs it.
func checkWorkloadTrace(t testing.TB, base *simulator.Scenario, actions []Action, verb, path string) WorkloadReport {
	t.Helper()
	rep := WorkloadReport{Scenario: base.Name, Verdict: VerdictInconclusive}
	tr, err := traces.ReadFile(path)
	if err != nil || tr.Workload == "" || tr.Scenario != base.Name {
		// checkTrace reports an unreadable file, and skips another
		// scenario's trace.
		rep.Report = checkTrace(t, base, verb, path, "")
		rep.Verdict = rep.Report.Verdict
		return rep
	}
	calls, err := decodeCalls(tr.Workload, actions)
	if err != nil {
		harnessExit(t, fmt.Sprintf("-opcheck.%s=%s: %v", verb, path, err))
		return rep
	}
	sc, err := WorkloadScenario(base, actions, calls)
	if err != nil {
		harnessExit(t, fmt.Sprintf("-opcheck.%s=%s: %v", verb, path, err))
		return rep
	}
	rep.Workload = calls
	rep.Report = checkTrace(t, sc, verb, path, tr.Workload)
	rep.Verdict = rep.Report.Verdict
	return rep
}

// sampleOf draws one value of g from fixed seeds (gopter's Sample seeds
// from the wall clock): only its type is used, but a replay must not
// depend on the clock even for that. A sieve may refuse a draw, so a few
// seeds are tried.
func sampleOf(g gopter.Gen) (any, bool) {
	params := gopter.DefaultGenParameters()
	for seed := int64(0); seed < 16; seed++ {
		if v, ok := g(params.CloneWithSeed(seed)).Retrieve(); ok && v != nil {
			return v, true
		}
	}
	return nil, false
}
