package explore

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/opcheck/opcheck/simulator"
)

// skipIfGCChosen skips a test of the collector tuning when the environment
// or the program chose GOGC, which the tuning leaves alone.
func skipIfGCChosen(t *testing.T) {
	t.Helper()
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the tuning leaves the collector alone")
	}
	if percent, _ := gcSettings(); percent != 100 {
		t.Skipf("GOGC is %d already: these tests start from the default", percent)
	}
}

func TestExplorationPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 1000},
		{4 * mib, 1000},   // 256 MiB of headroom would be 6,400%: capped
		{25 * mib, 1000},  // 1,024%: capped
		{64 * mib, 400},   // 256 MiB of headroom
		{128 * mib, 200},  // 256 MiB
		{256 * mib, 100},  // the headroom is the live heap: GOGC=100's rule
		{1024 * mib, 100}, // a larger live heap grows by itself, as under the default
	} {
		if got := explorationPercent(c.live); got != c.want {
			t.Errorf("explorationPercent(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

// TestExploreTunesTheCollector: while an Explore runs, GOGC follows the
// live heap (explorationPercent); nested tunings share one, and the last
// to end restores the default.
func TestExploreTunesTheCollector(t *testing.T) {
	skipIfGCChosen(t)
	sc := lookup(t, "casskop/fixed")
	// A fresh reading of the live heap: what the tuning starts from.
	runtime.GC()
	_, live := gcSettings()
	want := explorationPercent(live)
	if want <= 100 {
		t.Skipf("the test binary keeps %d MiB alive: GOGC=100's rule already, nothing to see", live>>20)
	}
	var during []int
	rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 3, Workers: 1, Visit: func(int, uint64, *simulator.Result) {
		p, _ := gcSettings()
		during = append(during, p)
	}})
	if rep.Err != nil || len(during) != 3 {
		t.Fatalf("the exploration ran %d schedules (error %v), want 3", len(during), rep.Err)
	}
	for i, p := range during {
		// A collection during the run may move the live heap a little.
		if p*5 < want*4 || p*4 > want*5 {
			t.Errorf("schedule %d ran with GOGC %d, want about %d (live heap %d MiB)", i, p, want, live>>20)
		}
	}
	if p, _ := gcSettings(); p != 100 {
		t.Errorf("after Explore: GOGC %d, want the default 100 restored", p)
	}

	outer := tuneGC()
	inner := tuneGC()
	tuned, _ := gcSettings()
	inner()
	inner() // ending twice ends once
	if p, _ := gcSettings(); p != tuned || p <= 100 {
		t.Errorf("an inner tuning's end left GOGC %d while the outer one runs, want %d kept", p, tuned)
	}
	outer()
	if p, _ := gcSettings(); p != 100 {
		t.Errorf("after the outer tuning's end: GOGC %d, want the default", p)
	}
}

// waitGOGC collects garbage until GOGC reads want (the tuning adjusts it in
// a finalizer, after a collection) or a second has passed, and returns the
// last reading.
func waitGOGC(want int) int {
	p, _ := gcSettings()
	for i := 0; i < 100 && p != want; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		p, _ = gcSettings()
	}
	return p
}

// TestTuningFollowsTheLiveHeap: as the live heap grows during an
// exploration, GOGC comes down so the heap grows by the headroom, not by
// ten times the live heap; when it shrinks again, GOGC goes back up.
func TestTuningFollowsTheLiveHeap(t *testing.T) {
	skipIfGCChosen(t)
	end := tuneGC()
	defer end()
	runtime.GC()
	_, base := gcSettings()
	// About 128 MiB more alive: GOGC near 100 * 256 / (128 + base).
	ballast := make([][]byte, 128)
	for i := range ballast {
		ballast[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	_, live := gcSettings()
	want := explorationPercent(live)
	if want >= explorationMaxPercent || want < 100 {
		t.Fatalf("live heap %d bytes (%d before the ballast): the test needs it between the headroom's tenth and the headroom", live, base)
	}
	if p := waitGOGC(want); p < want-10 || p > want+10 {
		t.Errorf("live heap %d MiB: GOGC %d after collections, want about %d", live>>20, p, want)
	}
	runtime.KeepAlive(ballast)
	ballast = nil
	if p := waitGOGC(explorationMaxPercent); p != explorationMaxPercent {
		t.Errorf("ballast dropped: GOGC %d after collections, want %d again", p, explorationMaxPercent)
	}
}

// TestTuningLeavesTheProgramsChoice: a GOGC the program set itself is left
// alone, before and during an exploration.
func TestTuningLeavesTheProgramsChoice(t *testing.T) {
	skipIfGCChosen(t)
	defer debug.SetGCPercent(100)

	debug.SetGCPercent(50)
	end := tuneGC()
	if p, _ := gcSettings(); p != 50 {
		t.Errorf("the program chose GOGC 50; during the tuning it reads %d", p)
	}
	end()
	if p, _ := gcSettings(); p != 50 {
		t.Errorf("the program chose GOGC 50; after the tuning it reads %d", p)
	}

	// A choice made while the tuning runs stands, through collections and
	// after the tuning's end.
	debug.SetGCPercent(100)
	end = tuneGC()
	debug.SetGCPercent(70)
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p, _ := gcSettings(); p != 70 {
		t.Errorf("GOGC set to 70 during the tuning: after collections it reads %d", p)
	}
	end()
	if p, _ := gcSettings(); p != 70 {
		t.Errorf("GOGC set to 70 during the tuning: after it it reads %d, want 70", p)
	}
}
