package explore

import (
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// TestFaultCoinDoublesWhileNothingChanges: the coin keeps its drawn rate
// while events change something, doubles it for every quietSpan decisions
// in a row that change nothing (up to 1/2), and falls back at the next
// store write, external step or fault; reads, deliveries and ticks change
// nothing.
func TestFaultCoinDoublesWhileNothingChanges(t *testing.T) {
	quietEvents := []model.Event{
		{Actor: model.ControllerActor("zk"), Op: model.OpGet, Kind: "ZookeeperCluster", Stale: true},
		{Actor: model.ControllerActor("zk"), Op: model.OpUpdateStatus, Kind: "ZookeeperCluster", Err: "Conflict: the object has been modified"},
		{Actor: model.ActorClock, Op: model.OpTick},
	}
	c := faultCoin{rate: 1.0 / 256}
	quiet := func(n int) {
		for range n {
			c.observe(&model.Decision{Kind: model.ChooseStep, Since: quietEvents})
		}
	}
	wantRate := func(what string, want float64) {
		t.Helper()
		if got := c.currentRate(); got != want {
			t.Errorf("%s (quiet %d): rate %v, want %v", what, c.quiet, got, want)
		}
	}
	quiet(quietSpan - 1)
	wantRate("one decision short of a quiet span", 1.0/256)
	quiet(1)
	wantRate("one quiet span", 1.0/128)
	quiet(quietSpan)
	wantRate("two quiet spans", 1.0/64)
	quiet(100 * quietSpan)
	wantRate("many quiet spans", 1.0/2)

	for _, e := range []model.Event{
		{Actor: model.ControllerActor("zk"), Op: model.OpUpdate, Kind: "StatefulSet", Change: model.ChangeModified},
		{Actor: model.Actor("external:zk-admin"), Op: model.OpExternal, Detail: "reconfig"},
		{Actor: model.ActorFault, Op: model.OpResumeCache, Kind: "ZookeeperCluster"},
	} {
		c.observe(&model.Decision{Kind: model.ChooseStep, Since: append(append([]model.Event(nil), quietEvents...), e)})
		wantRate("after "+string(e.Op), 1.0/256)
		quiet(3 * quietSpan)
		wantRate("three quiet spans", 1.0/32)
	}
}

// TestChoosersTakeMoreFaultsWhenNothingChanges runs Random and PCT, each
// with the coin at 1/256, over decisions of one ordinary and one fault
// option: when every decision follows a store write they take faults at
// about the drawn rate, when none does about half of the time.
func TestChoosersTakeMoreFaultsWhenNothingChanges(t *testing.T) {
	const decisions = 4000
	write := []model.Event{{Actor: model.ControllerActor("zk"), Op: model.OpUpdate, Change: model.ChangeModified}}
	options := []model.Option{{Actor: model.ControllerActor("zk")}, {Actor: model.ActorFault, Class: model.StepResume}}
	for _, mk := range []struct {
		name string
		new  func() (model.Chooser, *faultCoin)
	}{
		{"random", func() (model.Chooser, *faultCoin) {
			c := Random(5).(*random)
			return c, &c.coin
		}},
		{"pct", func() (model.Chooser, *faultCoin) {
			c := PCT(5, DefaultPCTDepth, DefaultPCTSteps).(*pct)
			return c, &c.coin
		}},
	} {
		faults := func(since []model.Event) int {
			c, coin := mk.new()
			coin.rate = 1.0 / 256
			n := 0
			for range decisions {
				if c.Choose(model.Decision{Kind: model.ChooseStep, Options: options, Since: since}) == 1 {
					n++
				}
			}
			return n
		}
		if n := faults(write); n > decisions/100 {
			t.Errorf("%s: %d faults in %d decisions after writes, want about %d (the drawn rate 1/256)", mk.name, n, decisions, decisions/256)
		}
		if n := faults(nil); n < decisions/3 {
			t.Errorf("%s: %d faults in %d decisions without a change, want about %d (the rate raised to 1/2)", mk.name, n, decisions, decisions/2)
		}
	}
}

// quietSpy records the longest quiet count of a random chooser's coin and
// whether the count fell back to 0 after reaching a quiet span.
type quietSpy struct {
	*random
	longest int
	reset   bool
}

func (s *quietSpy) Choose(d model.Decision) int {
	before := s.coin.quiet
	v := s.random.Choose(d)
	s.longest = max(s.longest, s.coin.quiet)
	if before >= quietSpan && s.coin.quiet == 0 {
		s.reset = true
	}
	return v
}

// TestSimulatorFeedsTheQuietCount: on zookeeper/fixed the simulator's
// decisions carry the events the coin counts: some schedule has a run of
// a quiet span without a change (the controller's laps against a paused
// cache), and a change ends it.
func TestSimulatorFeedsTheQuietCount(t *testing.T) {
	sc := lookup(t, "zookeeper/fixed")
	for seed := uint64(0); seed < 20; seed++ {
		spy := &quietSpy{random: Random(seed).(*random)}
		if _, err := simulator.Run(sc, spy, simulator.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if spy.reset {
			t.Logf("seed %d: longest quiet run %d decisions, then a change", seed, spy.longest)
			return
		}
	}
	t.Fatal("no schedule of seeds 0-19 had a quiet span that a change ended: does simulator.World fill Decision.Since?")
}
