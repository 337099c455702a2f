package properties_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

type randomChooser struct{ r *rand.Rand }

func (c randomChooser) Choose(d model.Decision) int { return c.r.IntN(len(d.Options)) }

// TestSharedFaultLogExplainsAsOwnLogs checks the fault log the monitors
// of one run share (State.faultLog) against a log of each monitor's own:
// over the histories of random schedules with every fault, each property
// checked with all the others in one run reports exactly the violation
// (explanation, related steps and all) it reports checked alone, where
// no other monitor can feed or skip its log. A never-true convergence
// and NoStuckReconcile(1) make fault explanations frequent.
func TestSharedFaultLogExplainsAsOwnLogs(t *testing.T) {
	never := properties.EventuallyConverges("NeverConverges", func(*properties.State) (bool, string) { return false, "never" })
	scenarios := []func() *simulator.Scenario{
		func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) },
		func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Fixed) },
	}
	seeds := uint64(10)
	if testing.Short() {
		seeds = 4
	}
	faults := model.FaultBudget{Crashes: 2, Stale: 1, Evictions: 1, Drops: 1}
	compared, withFaults := 0, 0
	for _, newScenario := range scenarios {
		for seed := range seeds {
			sc := newScenario()
			res, err := simulator.Run(sc, randomChooser{rand.New(rand.NewPCG(seed, 0x666c6f67))}, simulator.RunOptions{Faults: &faults, KeepGoing: true})
			if err != nil {
				t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
			}
			props := append([]properties.Property{never, properties.NoStuckReconcile(1)}, sc.Properties...)
			together := map[string]properties.Violation{}
			for _, v := range properties.Check(res.History, props...) {
				together[v.Property] = v
			}
			for _, p := range props {
				alone := properties.Check(res.History, p)
				got, found := together[p.Name]
				if len(alone) == 0 {
					if found {
						t.Fatalf("%s seed %d: %s is violated with the others, not alone:\n%s", sc.Name, seed, p.Name, got.String())
					}
					continue
				}
				if !found {
					t.Fatalf("%s seed %d: %s is violated alone, not with the others:\n%s", sc.Name, seed, p.Name, alone[0].String())
				}
				if !reflect.DeepEqual(got, alone[0]) {
					t.Fatalf("%s seed %d: %s with the others:\n%s\nalone:\n%s", sc.Name, seed, p.Name, got.String(), alone[0].String())
				}
				compared++
				if strings.Contains(got.Explanation, "Faults injected (") {
					withFaults++
				}
			}
		}
	}
	if withFaults < 5 {
		t.Fatalf("only %d of %d compared violations explain faults", withFaults, compared)
	}
	t.Logf("%d violations compared, %d explaining faults", compared, withFaults)
}
