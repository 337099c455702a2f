package zookeeper

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

func TestScenarioNoFaultsConverges(t *testing.T) {
	for _, v := range Variants() {
		t.Run(string(v), func(t *testing.T) {
			none := model.FaultBudget{}
			// Fair turns (an empty script), no faults.
			res, err := simulator.RunScript(Scenario(v), nil, simulator.RunOptions{Faults: &none})
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() {
				t.Log(res.History.Lines())
			}
			if len(res.Violations) > 0 {
				t.Fatalf("violations: %v", res.Violations)
			}
			if !res.Quiescent {
				t.Fatalf("not quiescent after %d steps", res.Steps)
			}
		})
	}
}
