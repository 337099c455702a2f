package simulator_test

import (
	"testing"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// TestFastWritesKeepRunsByteForByte: the write fast paths (a no-op
// update's spare answer, the no-op status write's shortcut, built-in
// actors' dropped answers) change nothing a run shows: random schedules of
// the shipped scenarios, each run once with the fast paths and once
// without, give the same history, choices and stored objects, byte for
// byte. The fast run zeroes every request whose answer a built-in actor
// drops, right after its write: an actor that read it again would change
// the run. (KubeRay's scenarios are left out: two runs of one seed through
// simulator.Run differ already, with or without the fast paths.) The test
// does not run in parallel: the switch is read by every
// store built while it is set.
func TestFastWritesKeepRunsByteForByte(t *testing.T) {
	scenarios := []struct {
		name string
		new  func() *simulator.Scenario
	}{
		{"zookeeper-fixed", func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Fixed) }},
		{"casskop-buggy", func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) }},
		{"casskop-fixed", func() *simulator.Scenario { return casskop.Scenario(casskop.Fixed) }},
		{"web", webScenario},
	}
	perScenario := uint64(40)
	if testing.Short() {
		perScenario = 8
	}
	defer simulator.SetWritePaths("fast")
	for _, s := range scenarios {
		for seed := uint64(0); seed < perScenario; seed++ {
			var fps [2]runFingerprint
			for k := range fps {
				simulator.SetWritePaths([]string{"poison", "slow"}[k])
				res, err := simulator.Run(s.new(), newRandomChooser(seed), simulator.RunOptions{KeepGoing: true})
				if err != nil {
					t.Fatalf("%s seed %d: %v", s.name, seed, err)
				}
				fps[k] = fingerprint(t, res)
			}
			compareFingerprints(t, s.name+" seed "+itoa(seed)+" (fast paths with dropped requests zeroed, then none)", fps[0], fps[1])
		}
	}
}
