package explore

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// Progress is a snapshot of an exploration under way.
type Progress struct {
	Schedules  int
	States     int
	Violations int
	// Covered estimates the part of the bounded space explored, in [0, 1]
	// (exhaustive only; -1 when unknown): the levels of fault counts done,
	// plus the depth-first position within the current level.
	Covered float64
}

// SplitDepth is how many fault decisions name a subtree for sharding.
const SplitDepth = 2

// exhaustive is the strategy StrategyExhaustive: it explores every placement of the scenario's faults along the
// default schedule, depth first. The bounds, stated in docs/explore.md:
//
//   - ordinary steps follow the default schedule: the environment (informer
//     deliveries, built-in actors, external systems) first, then the user,
//     then the controllers, then the clock; interleavings beyond that are
//     what the random and PCT strategies sample;
//   - a crash may strike at every decision that follows a write (or an
//     external call) of a controller under test, or the end of a workload
//     step: between two such points the controller only read, and a crash
//     discards what it read. With no cache paused, every apiserver serves
//     the head, so the restart is explored on apiserver-1 only;
//   - an eviction may strike right after a controller under test wrote a
//     pod or a PVC, or a workload step ended (a bound, not a proof:
//     evictions elsewhere are left to the random and PCT strategies);
//   - a watch cache of a kind may be paused, and a watch event of a kind
//     dropped, at every decision that follows a write of that kind: between
//     two such writes the cache's content and the events are the same;
//   - within the fault budget, every fault at every such decision, in every
//     combination;
//   - the faults end (the settle phase starts) when the budget is spent, or
//     when the workload is done and only the clock could move; a paused
//     cache stays paused until then.
//
// States are deduplicated at decisions where no reconcile is in flight
// (simulator.World.StateHash): a state reached again has the same futures,
// already explored.
//
// opts are normalised by Explore (Schedules and Shards set); the outcome
// goes into rep.
func exhaustive(sc *simulator.Scenario, opts Options, rep *Report, start time.Time) {
	budget := rep.Faults
	// Iterative deepening on the number of faults: every schedule with at
	// most L faults before any with L+1, so the smallest counterexamples
	// come first.
	for level := 0; level <= budget.Total() && !rep.Complete && (rep.Violation == nil || opts.keepGoing) && rep.Err == nil && rep.Schedules < opts.Schedules; level++ {
		exhaustLevel(sc, opts, level, budget.Total(), start, rep)
		if rep.Complete && level < budget.Total() {
			rep.Complete = false
		}
	}
	switch {
	case rep.Err != nil:
		rep.Verdict = VerdictError
	case rep.Violation != nil:
		rep.Verdict, rep.Violating = VerdictViolation, 1
	case rep.Complete:
		rep.Verdict = VerdictVerified
	default:
		rep.Verdict = VerdictInconclusive
	}
}

// exhaustLevel is the depth-first search over schedules with at most level
// faults, on opts.Workers goroutines.
//
// The search tree is cut into items: an item is a prefix of fault choices
// whose last choice is a fault (not the default option), and stands for
// the schedule that replays it and then takes the default option at every
// later fault decision. Running an item discovers those later decisions;
// each of their other options is a new item. Items are taken smallest
// first in the lexicographic order of their prefixes, which is the
// depth-first order of the sequential search: with one worker the schedules
// run exactly in that order.
//
// With more workers, the order in which states are first reached is no
// longer the depth-first order, so the visited table keeps, per state, the
// smallest path (in that order) that reached it: a path is pruned only at a
// state a smaller path reached, and a smaller path that arrives later goes
// on. The smallest violating schedule of the tree is therefore never
// pruned (a smaller path through one of its states would continue into an
// even smaller violating schedule), every violating schedule found is
// compared in that order, and work on items larger than the smallest
// violation found is dropped. The verdict, the violation reported, its
// choices and history are those of one worker, for every number of
// workers; the schedule, prune and state counts are not (concurrent
// workers may explore a state twice).
func exhaustLevel(sc *simulator.Scenario, opts Options, level, budgetTotal int, start time.Time, res *Report) {
	l := &levelSearch{sc: sc, opts: opts, level: level, budgetTotal: budgetTotal, start: start, res: res,
		visited: &visitedTable{m: map[uint64][]int{}}, queue: itemQueue{nil}}
	l.cond = sync.NewCond(&l.mu)
	var wg sync.WaitGroup
	for i := 0; i < max(1, opts.Workers); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work()
		}()
	}
	wg.Wait()
	res.States += l.visited.len()
	if l.best != nil {
		res.Violation, res.Index, res.Choices, res.History = l.best.violation, l.best.index, l.best.choices, l.best.history
	}
	if !l.stopped && l.running == 0 && len(l.queue) == 0 && (l.best == nil || opts.keepGoing) && res.Err == nil {
		res.Complete = true
	}
}

// levelSearch is the shared state of one level's workers, guarded by mu.
type levelSearch struct {
	sc                 *simulator.Scenario
	opts               Options
	level, budgetTotal int
	start              time.Time
	res                *Report
	visited            *visitedTable

	mu      sync.Mutex
	cond    *sync.Cond
	queue   itemQueue
	running int
	stopped bool // the budget, the time or a harness error ended the search
	best    *found
}

// found is a violating schedule with its depth-first key.
type found struct {
	key       []int
	index     int
	violation *properties.Violation
	choices   []model.Choice
	history   *model.History
}

// work runs items until none is left or the search stops.
func (l *levelSearch) work() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for len(l.queue) == 0 && l.running > 0 && !l.stopped {
			l.cond.Wait()
		}
		if len(l.queue) == 0 || l.stopped {
			return
		}
		if l.res.Schedules >= l.opts.Schedules || (l.opts.Time > 0 && time.Since(l.start) > l.opts.Time) {
			l.stop()
			return
		}
		prefix := heap.Pop(&l.queue).([]int)
		if l.best != nil && !l.opts.keepGoing && lessKey(l.best.key, prefix) {
			continue // after the smallest violation found: never reported
		}
		index := l.res.Schedules
		l.res.Schedules++
		l.running++
		l.mu.Unlock()
		c, r, pruned, err := l.run(prefix, index)
		l.mu.Lock()
		l.running--
		l.cond.Broadcast()
		if r != nil {
			l.res.Steps += r.Steps
		}
		if err != nil {
			if l.res.Err == nil {
				l.res.Err = err
			}
			l.stop()
			return
		}
		l.record(prefix, index, c, r, pruned)
	}
}

func (l *levelSearch) stop() {
	l.stopped = true
	l.cond.Broadcast()
}

// run runs the schedule of one item, outside the lock.
func (l *levelSearch) run(prefix []int, index int) (*dfsChooser, *simulator.Result, bool, error) {
	opts := l.opts
	if opts.perturb != nil {
		opts.perturb(prefix)
	}
	c := &dfsChooser{prefix: prefix, visited: l.visited, dedup: !opts.NoPrune, shard: opts.Shard, shards: opts.Shards, maxFaults: l.level}
	w, err := simulator.NewWorld(l.sc, c, simulator.RunOptions{Faults: opts.Faults})
	if err != nil {
		return nil, nil, false, err
	}
	r, err := w.Run()
	if err != nil {
		return c, r, false, err
	}
	if opts.CheckDeterminism && !w.Pruned() {
		again, err := simulator.Run(l.sc, &model.Sequence{Choices: r.Choices}, simulator.RunOptions{Faults: opts.Faults})
		if err != nil {
			return c, r, false, err
		}
		if a, b := r.History.Lines(), again.History.Lines(); a != b {
			return c, r, false, notDeterministic(l.sc, fmt.Sprintf("exhaustive schedule %d (replayed from its %d recorded choices)", index, len(r.Choices)), a, b)
		}
	}
	if shards := opts.Shards; shards > 1 && !c.skipped && len(c.taken) < SplitDepth && owner(c.taken, c.widths)%shards != opts.Shard {
		// A schedule that never reached the split point belongs to
		// the shard its few decisions name; the others only ran it to
		// learn the tree's shape.
		c.skipped = true
	}
	return c, r, w.Pruned(), nil
}

// record accounts for a finished item, under the lock: callbacks, counts,
// the violation, and the items its new decisions open.
func (l *levelSearch) record(prefix []int, index int, c *dfsChooser, r *simulator.Result, pruned bool) {
	res, opts := l.res, l.opts
	if opts.Visit != nil && !c.skipped {
		opts.Visit(index, 0, r)
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Schedules: res.Schedules, States: res.States + l.visited.len(), Covered: covered(l.level, l.budgetTotal, c.taken, c.widths)})
	}
	switch {
	case c.skipped:
		res.Skipped++
	case pruned:
		res.Pruned++
	}
	if len(r.Violations) > 0 && !c.skipped {
		if l.best == nil || lessKey(prefix, l.best.key) {
			l.best = &found{key: prefix, index: index, violation: &r.Violations[0], choices: r.Choices, history: r.History}
		}
		if !opts.keepGoing {
			return // its subtree comes after it
		}
	}
	for d := len(prefix); d < len(c.taken); d++ {
		for o := 1; o < c.widths[d]; o++ {
			heap.Push(&l.queue, append(c.taken[:d:d], o))
		}
	}
	l.cond.Broadcast()
}

// lessKey orders fault-choice prefixes depth first: lexicographically, a
// prefix before its extensions.
func lessKey(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// itemQueue is a min-heap of items in depth-first order.
type itemQueue [][]int

func (q itemQueue) Len() int           { return len(q) }
func (q itemQueue) Less(i, j int) bool { return lessKey(q[i], q[j]) }
func (q itemQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *itemQueue) Push(x any)        { *q = append(*q, x.([]int)) }
func (q *itemQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// visitedTable holds the states one level of the search has reached, each
// with the smallest path (its fault choices so far) that reached it; the
// level's workers share it.
type visitedTable struct {
	mu sync.Mutex
	m  map[uint64][]int
}

// claim reports whether the path key may go on from state h: no path
// reached h before, or only larger ones (key then takes their place). A
// path larger than the recorded one is pruned: the recorded one explores
// the same futures, earlier in the depth-first order.
func (v *visitedTable) claim(h uint64, key []int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.m[h]; ok && !lessKey(key, old) {
		return false
	}
	v.m[h] = slices.Clone(key)
	return true
}

func (v *visitedTable) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.m)
}

// dfsChooser replays a prefix of fault decisions and otherwise follows the
// default schedule. It decides from the decisions alone (their options,
// the events since the previous one, the state fingerprint) and its own
// state, and ends a run it prunes by answering model.Prune.
type dfsChooser struct {
	prefix    []int
	taken     []int
	widths    []int
	started   bool
	paused    bool // a watch cache is paused (a resume option is offered)
	milestone bool
	storage   bool // a controller wrote a pod or a PVC, or a workload step ended
	kinds     map[string]bool
	faults    int // faults injected in this schedule
	maxFaults int
	visited   *visitedTable
	dedup     bool
	shard     int
	shards    int
	skipped   bool
}

func (c *dfsChooser) Choose(d model.Decision) int {
	if d.Kind != model.ChooseStep {
		return 0
	}
	steps := d.Options
	def := defaultStep(steps)
	c.scan(d.Since)
	c.paused = false
	for i := range steps {
		if steps[i].Class == model.StepResume {
			c.paused = true
		}
	}
	point := !c.started || c.milestone || c.storage || len(c.kinds) > 0
	var faults []int
	if c.faults < c.maxFaults {
		for i := range steps {
			if steps[i].Fault != 0 && c.relevant(&steps[i]) {
				faults = append(faults, i)
			}
		}
	}
	c.resetMarks()
	if !point {
		return def
	}
	// Dedup at every point where a fault could matter, also once the
	// faults are spent: a state reached again has the same future, which
	// the depth-first order has already explored in full. The future also
	// depends on the search's own state: the faults left at this level and
	// which faults the relevance marks offer now (a state reached right
	// after a write offers a crash; the same state reached otherwise may
	// not). With shards, only states below the split point are merged:
	// their whole future belongs to this shard, while a state above it
	// has futures that other shards own.
	if len(c.taken) >= len(c.prefix) && c.dedup && (c.shards <= 1 || len(c.taken) >= SplitDepth) {
		if h, ok := d.Fingerprint(); ok {
			h ^= uint64(c.maxFaults-c.faults) * 0x9e3779b97f4a7c15
			h = mixFaults(h, faults)
			if !c.visited.claim(h, c.taken) {
				return model.Prune
			}
		}
	}
	if len(faults) == 0 {
		return def
	}
	depth := len(c.taken)
	opt := 0
	if depth < len(c.prefix) {
		opt = c.prefix[depth]
	}
	c.taken = append(c.taken, opt)
	c.widths = append(c.widths, 1+len(faults))
	if c.shards > 1 && len(c.taken) == SplitDepth && depth >= len(c.prefix)-1 {
		if owner(c.taken, c.widths)%c.shards != c.shard {
			c.skipped = true
			return model.Prune
		}
	}
	if opt == 0 {
		return def
	}
	c.faults++
	return faults[opt-1]
}

// mixFaults folds the offered faults (indices into the enabled steps, which
// the world state determines) into a state hash.
func mixFaults(h uint64, faults []int) uint64 {
	h = mix(h ^ uint64(len(faults)))
	for _, f := range faults {
		h = mix(h ^ uint64(f+1))
	}
	return h
}

// scan reads the events recorded since the last decision and marks what
// changed: a write or external call of a controller under test, the end of
// a workload step, the kinds written.
func (c *dfsChooser) scan(since []model.Event) {
	for i := range since {
		e := &since[i]
		switch {
		case e.Op == model.OpWorkload && strings.HasPrefix(e.Detail, "done:"):
			c.milestone = true
			c.storage = true
		case properties.IsController(e.Actor) && (e.Change != model.ChangeNone || e.Op == model.OpExternal):
			c.milestone = true
			if e.Kind == "Pod" || e.Kind == "PersistentVolumeClaim" {
				c.storage = true
			}
		}
		if e.Change != model.ChangeNone {
			if c.kinds == nil {
				c.kinds = map[string]bool{}
			}
			c.kinds[e.Kind] = true
		}
	}
}

// relevant says whether a fault is offered at this decision: only where it
// can lead somewhere new (see Exhaustive). A crash or an eviction right
// after a write of the controller or the end of a workload step; a paused
// cache or a dropped event of a kind right after that kind was written.
// The very first decision offers every fault.
func (c *dfsChooser) relevant(s *model.Option) bool {
	if !c.started && s.Fault != model.FaultCrash {
		return true
	}
	switch s.Fault {
	case model.FaultStale, model.FaultDrop, model.FaultExpire:
		return c.kinds[s.Kind]
	case model.FaultEvict:
		return c.storage
	case model.FaultCrash:
		// With no cache paused every apiserver serves the head: restarts
		// on any of them lead to the same state, so one is enough.
		if !c.paused && s.Server != 1 {
			return false
		}
		return c.milestone
	default:
		return c.milestone
	}
}

func (c *dfsChooser) resetMarks() {
	c.started = true
	c.milestone = false
	c.storage = false
	clear(c.kinds)
}

// covered estimates the explored part of the space: each level of fault
// count is an equal share, and within a level the depth-first position is
// read as a fraction (the first decision's option over its width, plus the
// second's over the product of both widths, and so on).
func covered(level, levels int, taken, widths []int) float64 {
	frac, scale := 0.0, 1.0
	for i := range taken {
		scale /= float64(widths[i])
		frac += float64(taken[i]) * scale
	}
	return (float64(level) + frac) / float64(levels+1)
}

// owner is the shard of a subtree named by its first decisions.
func owner(taken, widths []int) int {
	n := 0
	for i := range taken {
		n = n*widths[i] + taken[i]
	}
	return n
}

// defaultStep is the default schedule's choice: the environment first
// (informer deliveries, built-in actors, external systems), then the user,
// then the controllers, then the clock; once the workload is done and only
// the clock or faults could move, the faults end (settle).
func defaultStep(steps []model.Option) int {
	best, bestRank := 0, 1<<30
	for i := range steps {
		r := rank(&steps[i])
		if r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

func rank(s *model.Option) int {
	switch s.Class {
	case model.StepFault:
		return 100
	case model.StepSettle:
		return 5
	case model.StepResume:
		return 90 // only at settle
	case model.StepClock:
		return 6
	case model.StepDeliver:
		return 0
	case model.StepReconcile:
		return 3
	case model.StepWorkload:
		return 2
	default:
		return 1
	}
}
