package explore

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Exploration allocates many short-lived copies (every object a reconciler
// reads is its own copy, every run builds a world) over a small live heap,
// so with the default GOGC=100 the collector runs almost continuously: an
// exhaustive zookeeper/fixed search under `go test` spends a third of its
// CPU in it (docs/benchmarks.md, "The collector under go test"). While an
// Explore runs, gcTuning therefore lets the heap grow past the live heap by
// explorationHeadroom, or by the live heap itself once that is larger
// (GOGC=100's rule), and never by more than explorationMaxPercent of it:
// collections come about ten times less often over a small live heap, and
// a long search whose live heap grows (its visited states) pays at most
// its live heap plus 256 MiB, and twice its live heap once that is larger,
// as under the default.
//
// The collector's settings belong to the process, so the tuning is shared:
// the first exploration to start sets it, the last to end restores what
// was there. It leaves GOGC alone when the environment (GOGC) or the
// program (debug.SetGCPercent) chose a value, and stops adjusting it, for
// good, when the program sets one while it runs.
const (
	// explorationHeadroom is how far past the live heap the heap may grow
	// before the next collection, over a live heap smaller than it.
	explorationHeadroom = 256 << 20
	// explorationMaxPercent bounds GOGC during an exploration: over a
	// tiny live heap the headroom alone would mean rare, huge cycles.
	explorationMaxPercent = 1000
)

// gcTuning is the collector's tuning while explorations run.
var gcTuning struct {
	mu     sync.Mutex
	active int // explorations running
	// gen numbers the tunings: a sentinel of an ended one does nothing.
	gen uint64
	// tuned: the tuning owns GOGC (it set percent, replacing prev).
	tuned         bool
	percent, prev int
}

// gcSentinel is an object only a finalizer refers to: the finalizer runs
// after the collection that found it unreachable, adjusts GOGC to the live
// heap that collection left, and re-arms itself for the next one.
type gcSentinel struct {
	gen uint64
	_   [24]byte // not a tiny allocation, whose finalizer may wait for its neighbours
}

// tuneGC starts an exploration's share of the tuning and returns the
// function that ends it (once, however often it is called).
func tuneGC() (end func()) {
	gcTuning.mu.Lock()
	defer gcTuning.mu.Unlock()
	gcTuning.active++
	if gcTuning.active == 1 && os.Getenv("GOGC") == "" {
		if percent, live := gcSettings(); percent == 100 {
			gcTuning.gen++
			gcTuning.tuned = true
			gcTuning.percent = explorationPercent(live)
			gcTuning.prev = debug.SetGCPercent(gcTuning.percent)
			armGCSentinel(gcTuning.gen)
		}
	}
	var once sync.Once
	return func() { once.Do(untuneGC) }
}

// untuneGC ends one exploration's share of the tuning; the last restores
// GOGC if it still holds the tuning's value.
func untuneGC() {
	gcTuning.mu.Lock()
	defer gcTuning.mu.Unlock()
	gcTuning.active--
	if gcTuning.active > 0 || !gcTuning.tuned {
		return
	}
	gcTuning.tuned = false
	gcTuning.gen++
	if percent, _ := gcSettings(); percent == gcTuning.percent {
		debug.SetGCPercent(gcTuning.prev)
	}
}

func armGCSentinel(gen uint64) {
	runtime.SetFinalizer(&gcSentinel{gen: gen}, retuneGC)
}

// retuneGC runs after a collection (gcSentinel): while its tuning lasts and
// owns GOGC, it sets GOGC for the live heap the collection left and
// re-arms.
func retuneGC(s *gcSentinel) {
	gcTuning.mu.Lock()
	defer gcTuning.mu.Unlock()
	if !gcTuning.tuned || s.gen != gcTuning.gen {
		return
	}
	percent, live := gcSettings()
	if percent != gcTuning.percent {
		// The program set GOGC meanwhile: its choice stands.
		gcTuning.tuned = false
		return
	}
	if p := explorationPercent(live); p != percent {
		debug.SetGCPercent(p)
		gcTuning.percent = p
	}
	runtime.SetFinalizer(s, retuneGC)
}

// explorationPercent is the GOGC that lets a heap of live bytes grow by
// max(explorationHeadroom, live) before the next collection, between 100
// and explorationMaxPercent.
func explorationPercent(live uint64) int {
	if live == 0 {
		return explorationMaxPercent
	}
	p := uint64(100) * max(explorationHeadroom, live) / live
	return int(min(max(p, 100), explorationMaxPercent))
}

// gcSettings reads GOGC and the live heap (bytes marked by the last
// collection) without changing them. A metric the runtime does not know
// reads as GOGC -2 (chosen: left alone) and a live heap of 0.
func gcSettings() (percent int, live uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	percent = -2
	if s[0].Value.Kind() == metrics.KindUint64 {
		percent = int(min(s[0].Value.Uint64(), math.MaxInt32))
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		live = s[1].Value.Uint64()
	}
	return percent, live
}
