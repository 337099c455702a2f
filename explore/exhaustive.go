package explore

import (
	"container/heap"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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
	// (exhaustive only; -1 when unknown): an equal share per number of
	// faults, for those whose schedules are done, plus the depth-first
	// position of the current schedule among those with as many faults.
	Covered float64
}

// exhaustive is the strategy StrategyExhaustive: it explores every placement of the scenario's faults along the
// default schedule, fewest faults first, then depth first. The bounds,
// stated in docs/explore.md:
//
//   - ordinary steps follow the default schedule: the environment (informer
//     deliveries, built-in actors, external systems) first, then the user,
//     then the controllers, then the clock; interleavings beyond that are
//     what the random and PCT strategies sample;
//   - a crash may strike at every decision that follows a write (or an
//     external call) of a controller under test, the end of a workload
//     step or a tick of the clock: between two such points the controller
//     only read, and a crash discards what it read. With no cache paused,
//     every apiserver serves the head, so the restart is explored on
//     apiserver-1 only;
//   - an eviction of pod P may strike at every decision that follows a
//     step that read P (a Get of it, a List that returned it) or wrote it,
//     a write by an actor whose reads the history does not record (the
//     built-in StatefulSet controller, PVC protection), the end of a
//     workload step or a tick of the clock: between two such points
//     nothing looked at P;
//   - a watch cache of a kind may be paused, and a watch event of a kind
//     dropped, at every decision that follows a write of that kind: between
//     two such writes the cache's content and the events are the same;
//   - within the fault budget, every fault at every such decision, in every
//     combination. The three rules above are the partial-order reduction,
//     an independence relation between a fault and the steps before the
//     decision (reduction.go); Options.NoReduce turns them off;
//   - the faults end (the settle phase starts) when the budget is spent, or
//     when the workload is done and only the clock could move; a paused
//     cache stays paused until then.
//
// States are deduplicated at decisions where no reconcile is in flight
// (simulator.World.StateHash): a state reached again, at any depth, has the
// same futures, already explored, unless the path went round a cycle or
// the step bound cut one of those futures (visitedTable, boundsHeld).
//
// A schedule resumes from a checkpoint the schedule that opened it took at
// (or up to 32 steps before) the decision where it departs from it
// (resumePoint, simulator.World.Checkpoint), instead of re-running that
// prefix; Options.NoResume replays every schedule from the start. Both
// run the same schedules (TestResumeExploresTheSameSchedules).
//
// One search covers every number of faults up to the budget, in the order
// in which iterative deepening on the number of faults would first meet
// the schedules, without running any twice (exhaustSearch says why it
// reports what iterative deepening reports). Options.perLevel (tests)
// runs the iterative deepening itself, a search per number of faults L =
// 0, 1, ..., each re-running the schedules of the lower ones: the oracle
// the one search is checked against.
//
// opts are normalised by Explore (Schedules and Shards set); the outcome
// goes into rep.
func exhaustive(sc *simulator.Scenario, opts Options, rep *Report, start time.Time) {
	budget := rep.Faults.Total()
	if opts.perLevel {
		for level := 0; level <= budget && !rep.Complete && (rep.Violation == nil || opts.keepGoing) && rep.Err == nil && rep.Schedules < opts.Schedules; level++ {
			exhaustSearch(sc, opts, level, budget, false, start, rep)
			if rep.Complete && level < budget {
				rep.Complete = false
			}
		}
	} else {
		exhaustSearch(sc, opts, budget, budget, true, start, rep)
	}
	if rep.Err == nil && rep.Violation != nil && !opts.NoResume && !opts.keepGoing {
		rep.Err = confirmFromStart(sc, rep)
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

// confirmFromStart runs the violating schedule of rep again from the
// start and returns an error unless it gives the same history and the same
// first violation. The search may have found the violation in a world
// resumed from a checkpoint, which went on from copies: of the property
// monitors (properties.Forker) and of external systems
// (simulator.Forkable), which a user's code provides. A copy that shares
// or misses state can make a violation no run from the start has, and the
// trace would not replay it; one schedule run again (a few milliseconds)
// keeps that from being reported as the operator's bug. Where the scenario
// declares KnownNondeterminism, the order of its reads may differ between
// two runs of the same choices, so its writes stand for its history.
func confirmFromStart(sc *simulator.Scenario, rep *Report) error {
	again, err := Replay(sc, rep.Choices, &rep.Faults)
	var why string
	switch {
	case err != nil:
		why = err.Error()
	case sc.KnownNondeterminism == "" && again.History.Lines() != rep.History.Lines():
		why = "the search's run, then the run from the start, differ at " + firstDiffLine(rep.History.Lines(), again.History.Lines())
	case sc.KnownNondeterminism != "" && historyWrites(again.History) != historyWrites(rep.History):
		why = "the search's run, then the run from the start, write differently at " + firstDiffLine(historyWrites(rep.History), historyWrites(again.History))
	case len(again.Violations) == 0:
		why = "the run from the start breaks no property"
	case again.Violations[0].Property != rep.Violation.Property || again.Violations[0].Step != rep.Violation.Step:
		why = fmt.Sprintf("the run from the start breaks %s at step %d first", again.Violations[0].Property, again.Violations[0].Step)
	default:
		return nil
	}
	return fmt.Errorf("scenario %s: the exhaustive search found %s violated at step %d of schedule %d, but that schedule run from the start does not give the same outcome (%s). The search resumes schedules from checkpoints, so a copy it went on from did not match the original: a property monitor's Fork (properties.Forker) or an external system's ForkState/ResumeState shares or misses state; or the scenario is not deterministic (Options.CheckDeterminism). Fix the copy, or explore with -no-resume (Options.NoResume), which runs every schedule from the start", sc.Name, rep.Violation.Property, rep.Violation.Step, rep.Index, why)
}

// historyWrites is the lines of h's writes.
func historyWrites(h *model.History) string {
	var b strings.Builder
	for i := range h.Events {
		if e := &h.Events[i]; e.Change != model.ChangeNone {
			b.WriteString(e.Line())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// exhaustSearch is the search over schedules with at most maxFaults
// faults, on opts.Workers goroutines.
//
// The search tree is cut into items: an item is a prefix of fault choices
// whose last choice is a fault (not the default option), and stands for
// the schedule that replays it and then takes the default option at every
// later fault decision. Running an item discovers those later decisions;
// each of their other options is a new item, with one fault more. Items
// are taken smallest first in the search's order (lessItem): fewer faults
// first (faultsFirst; the iterative deepening of Options.perLevel leaves
// that out), and among as many faults, lexicographically by prefix, which
// is the depth-first order. With one worker the schedules run exactly in
// that order; an item's children wait until every item with as many
// faults as it has run.
//
// Why the one search reports what iterative deepening reports (a
// depth-first search with at most L faults for L = 0, 1, ..., up to the
// first L with a violation, each with its own visited table):
//
//   - The same schedules, the same keys. A fault decision is a decision
//     where the schedule has faults left and a fault is offered; which
//     faults are offered does not depend on the budget. So for a schedule
//     with k faults, the decisions up to its last fault are fault
//     decisions with the same options in level k's search, in every higher
//     one and in this one: its key, and its steps, are the same.
//   - The same merges. A state's fingerprint carries the faults left
//     (maxFaults minus the faults taken), so the visited table only merges
//     paths with as many faults so far, and among those the order is the
//     depth-first one. With one worker this search is the last level of
//     iterative deepening (maxFaults = the budget), with the same schedules
//     pruned at the same states, run in another order
//     (TestOneSearchIsTheLastLevelReordered).
//   - The same first violation. A path is pruned only at a state that a
//     smaller path (in the search's order) reached with as many faults;
//     that path continued with the pruned path's later choices is a
//     violating schedule, if the pruned one's was (the same steps from the
//     same state, which boundsHeld checks the step bound does not undo),
//     with as many faults and a smaller key. So the smallest violating schedule in this order is never
//     pruned, and it is the one reported: it has the fewest faults of any
//     violating schedule, and the smallest key among those. Iterative
//     deepening reports the depth-first smallest violating schedule of
//     the first level that has one: every violating schedule of that level
//     has that same fewest number of faults, and their keys are the same
//     as here (TestOneSearchMatchesIterativeDeepening).
//
// With more workers, the order in which states are first reached is no
// longer the search's order, so the visited table keeps, per state, the
// smallest path (in that order) that reached it: a path is pruned only at
// a state a smaller path reached, and a smaller path that arrives later
// goes on. The smallest violating schedule of the tree is therefore never
// pruned (as above), every violating schedule found is compared in that
// order, and work on items larger than the smallest violation found is
// dropped. The verdict, the violation reported, its choices and history
// are those of one worker, for every number of workers; the schedule,
// prune and state counts are not (concurrent workers may explore a state
// twice).
func exhaustSearch(sc *simulator.Scenario, opts Options, maxFaults, budgetTotal int, faultsFirst bool, start time.Time, res *Report) {
	s := search(sc, opts, maxFaults, budgetTotal, faultsFirst, start, res, false)
	if s.drained() && !opts.NoPrune && !opts.trustDepth && !boundsHeld(s.runs, settleBound(sc), stepBound(sc)) {
		// A merge at a different depth may have hidden what the step
		// bound does: explore again, merging only states reached at the
		// same depth. Its outcome replaces the first's.
		res.Reexplored++
		s = search(sc, opts, maxFaults, budgetTotal, faultsFirst, start, res, true)
	}
	if s.best != nil && res.Violation == nil { // per level with keepGoing: the first level's stands
		res.Violation, res.Index, res.Choices, res.History = s.best.violation, s.best.index, s.best.choices, s.best.history
		res.violationFaults = s.best.key.faultsIn()
	}
	if s.drained() && (s.best == nil || opts.keepGoing) {
		res.Complete = true
	}
	res.FaultsExplored, res.Cut = s.explored(), s.cut
}

// explored is the most faults n such that the search ran every schedule
// with at most n faults (or pruned it at a state a smaller path explored
// with as many faults) and none broke a property; -1 when it cannot say
// that even of the schedule without faults. Items run fewest faults first
// (lessItem), so when a budget ends the search, every item with fewer
// faults than the fewest of those left in the queue has run, its children
// recorded. A violation takes its own number of faults out: the smallest
// violating schedule has the fewest faults of any (the items dropped after
// it have as many or more). A merge the step bound may have undone
// (boundsHeld) leaves nothing certain, as it makes a drained search
// explore again.
func (s *treeSearch) explored() int {
	if s.res.Err != nil {
		return -1
	}
	n := s.maxFaults
	if !s.drained() {
		if !s.faultsFirst {
			n-- // per level (tests): the levels below ran to their end
		}
		if s.queue.Len() > 0 && s.faultsFirst {
			n = min(n, s.queue.items[0].faultsIn()-1)
		}
		if !s.opts.NoPrune && !s.opts.trustDepth && !s.visited.exact && !boundsHeld(s.runs, settleBound(s.sc), stepBound(s.sc)) {
			return -1
		}
	}
	if s.best != nil {
		n = min(n, s.best.key.faultsIn()-1)
	}
	return max(n, -1)
}

// search runs one search to its end on opts.Workers goroutines; exact
// merges only states reached at the same depth.
func search(sc *simulator.Scenario, opts Options, maxFaults, budgetTotal int, faultsFirst bool, start time.Time, res *Report, exact bool) *treeSearch {
	less := lessKey
	if faultsFirst {
		less = lessItem
	}
	s := &treeSearch{sc: sc, opts: opts, maxFaults: maxFaults, budgetTotal: budgetTotal, faultsFirst: faultsFirst, less: less, start: start, res: res,
		visited: &visitedTable{m: map[uint64]*visit{}, exact: exact, less: less}, queue: itemQueue{items: []item{{}}, less: less}}
	s.cond = sync.NewCond(&s.mu)
	var wg sync.WaitGroup
	for i := 0; i < max(1, opts.Workers); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work()
		}()
	}
	wg.Wait()
	res.States += s.visited.len()
	return s
}

// drained reports whether the search ran every item it had to (none left,
// no budget, time or harness error cut it short).
func (s *treeSearch) drained() bool {
	return !s.stopped && s.running == 0 && s.queue.Len() == 0 && s.res.Err == nil
}

// stepBound and settleBound are the scenario's step bound and the step
// count at which the world ends the fault phase whatever the schedule
// (the simulator's stepScheduler.shouldSettle: two thirds of the bound).
func stepBound(sc *simulator.Scenario) int {
	if sc.MaxSteps > 0 {
		return sc.MaxSteps
	}
	return simulator.DefaultMaxSteps
}

func settleBound(sc *simulator.Scenario) int { return stepBound(sc) * 2 / 3 }

// treeSearch is the shared state of one search's workers, guarded by mu.
type treeSearch struct {
	sc                     *simulator.Scenario
	opts                   Options
	maxFaults, budgetTotal int
	faultsFirst            bool
	less                   func(a, b path) bool // the order of items: lessItem, or lessKey per level
	start                  time.Time
	res                    *Report
	visited                *visitedTable

	mu      sync.Mutex
	cond    *sync.Cond
	queue   itemQueue
	running int
	stopped bool // the budget, the time or a harness error ended the search
	// checkpoints counts the checkpoints items in the queue resume from
	// (resumePoint.refs): past maxCheckpoints, schedules take no more.
	checkpoints atomic.Int64
	// cut names the budget that stopped the search (CutSchedules or
	// CutTime), if one did.
	cut  string
	best *found
	runs []*runRecord // every schedule run that ran in this shard
}

// found is a violating schedule with its key.
type found struct {
	key       path
	index     int
	violation *properties.Violation
	choices   []model.Choice
	history   *model.History
}

// work runs items until none is left or the search stops.
func (s *treeSearch) work() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for s.queue.Len() == 0 && s.running > 0 && !s.stopped {
			s.cond.Wait()
		}
		if s.queue.Len() == 0 || s.stopped {
			return
		}
		if s.res.Schedules >= s.opts.Schedules || (s.opts.Time > 0 && time.Since(s.start) > s.opts.Time) {
			if s.cut = CutTime; s.res.Schedules >= s.opts.Schedules {
				s.cut = CutSchedules
			}
			s.stop()
			return
		}
		it := heap.Pop(&s.queue).(item)
		if p := it.from; p != nil {
			if p.refs--; p.refs == 0 {
				s.checkpoints.Add(-1) // the item holds it until it has run
			}
		}
		prefix := it.path
		if s.best != nil && !s.opts.keepGoing && s.less(s.best.key, prefix) {
			continue // after the smallest violation found: never reported
		}
		index := s.res.Schedules
		s.res.Schedules++
		s.running++
		s.mu.Unlock()
		c, r, pruned, err := s.run(it, index)
		s.mu.Lock()
		s.running--
		s.cond.Broadcast()
		if r != nil {
			s.res.Steps += r.Steps
			s.res.Reconciles += r.Reconciles
			s.res.Replayed += c.replayed - c.resumed
			s.res.Resumed += c.resumed
			s.res.MonitorReplayed += r.MonitorReplayed
		}
		if err != nil {
			if s.res.Err == nil {
				s.res.Err = err
			}
			s.stop()
			return
		}
		s.record(prefix, index, c, r, pruned)
		if s.opts.Visit == nil && (s.best == nil || s.best.history != r.History) {
			r.Release() // nothing kept it: its history array serves a later schedule
		}
	}
}

func (s *treeSearch) stop() {
	s.stopped = true
	s.cond.Broadcast()
}

// run runs the schedule of one item, outside the lock: from the start,
// or from the checkpoint the item resumes from.
func (s *treeSearch) run(it item, index int) (*dfsChooser, *simulator.Result, bool, error) {
	opts, prefix := s.opts, it.path
	if opts.perturb != nil {
		opts.perturb(prefix.dense())
	}
	c := &dfsChooser{prefix: prefix, visited: s.visited, dedup: !opts.NoPrune, full: opts.NoReduce, stranding: opts.offerStranding, shards: opts.Shards, maxFaults: s.maxFaults,
		marks: stepMarks{first: true, ignoreTicks: opts.ignoreTicks}, run: &runRecord{prefix: prefix}, checkpoints: !opts.NoResume, live: &s.checkpoints}
	var w *simulator.World
	var err error
	if from := it.from; from != nil {
		from.enter(c)
		w, err = from.cp.Resume(c)
	} else {
		w, err = simulator.NewWorld(s.sc, c, simulator.RunOptions{Faults: opts.Faults})
	}
	if err != nil {
		return nil, nil, false, err
	}
	c.world = w
	r, err := w.Run()
	if err != nil {
		return c, r, false, err
	}
	if opts.CheckDeterminism && !w.Pruned() {
		again, err := simulator.Run(s.sc, &model.Sequence{Choices: r.Choices}, simulator.RunOptions{Faults: opts.Faults})
		if err != nil {
			return c, r, false, err
		}
		if a, b := r.History.Lines(), again.History.Lines(); a != b {
			return c, r, false, notDeterministic(s.sc, fmt.Sprintf("exhaustive schedule %d (replayed from its %d recorded choices)", index, len(r.Choices)), a, b)
		}
		again.Release()
	}
	if opts.Shards > 1 && opts.Shard != 0 && prefix.faultsIn() == 0 {
		// The schedule without faults belongs to shard 0; the others
		// ran it to learn the first faults they are dealt (record).
		c.skipped = true
	}
	return c, r, w.Pruned(), nil
}

// record accounts for a finished item, under the lock: callbacks, counts,
// the violation, and the items its new decisions open.
func (s *treeSearch) record(prefix path, index int, c *dfsChooser, r *simulator.Result, pruned bool) {
	res, opts := s.res, s.opts
	if opts.Visit != nil && !c.skipped {
		opts.Visit(index, 0, r)
	}
	if opts.Progress != nil {
		share := s.maxFaults // per level: the level's share
		if s.faultsFirst {
			share = prefix.faultsIn()
		}
		opts.Progress(Progress{Schedules: res.Schedules, States: res.States + s.visited.len(), Covered: covered(share, s.budgetTotal, c.taken, c.widths)})
	}
	switch {
	case c.skipped:
		res.Skipped++
	case pruned:
		res.Pruned++
	}
	if !c.skipped {
		c.run.faultEnd, c.run.end = c.depth, r.Steps
		s.runs = append(s.runs, c.run)
	}
	if len(r.Violations) > 0 && !c.skipped {
		if s.best == nil || s.less(prefix, s.best.key) {
			s.best = &found{key: prefix, index: index, violation: &r.Violations[0], choices: r.Choices, history: r.History}
		}
		if !opts.keepGoing {
			return // its subtree comes after it
		}
	}
	// With shards, the items the schedule without faults opens (each a
	// first fault, whose subtree holds every schedule that begins with
	// it) are dealt to the shards in turn, in the order it opens them:
	// every shard runs that schedule and opens the same items, so the
	// shards' subtrees partition the tree. Dealing them in turn spreads
	// the large subtrees of early first faults over every shard.
	deal, dealt := opts.Shards > 1 && prefix.faultsIn() == 0, 0
	for d := prefix.len(); d < len(c.taken); d++ {
		for o := 1; o < c.widths[d]; o++ {
			if deal {
				if dealt++; (dealt-1)%opts.Shards != opts.Shard {
					continue
				}
			}
			from := c.resumeFrom(d)
			if from != nil {
				if from.refs == 0 {
					s.checkpoints.Add(1)
				}
				from.refs++
			}
			heap.Push(&s.queue, item{path: child(c.faultsTaken, d, o), from: from})
		}
	}
	s.cond.Broadcast()
}

// item is a schedule the search has yet to run: its path, and the
// checkpoint it resumes from (nil: from the start).
type item struct {
	path
	from *resumePoint
}

// itemQueue is a min-heap of items in the search's order.
type itemQueue struct {
	items []item
	less  func(a, b path) bool
}

func (q *itemQueue) Len() int           { return len(q.items) }
func (q *itemQueue) Less(i, j int) bool { return q.less(q.items[i].path, q.items[j].path) }
func (q *itemQueue) Swap(i, j int)      { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *itemQueue) Push(x any)         { q.items = append(q.items, x.(item)) }
func (q *itemQueue) Pop() any {
	old := q.items
	x := old[len(old)-1]
	old[len(old)-1] = item{} // the array keeps no item that ran (nor its checkpoint)
	q.items = old[:len(old)-1]
	return x
}

// visitedTable holds the states one search has reached, each with the
// smallest path (in the search's order) that reached it; the search's
// workers share it. Paths that merge have taken as many faults (the
// fingerprint carries the faults left), so among them the order is the
// depth-first one.
//
// A state is fingerprinted without the number of steps taken
// (simulator.World.StateHash): the same state reached after a different
// number of steps has the same futures as long as the step bound cuts
// none of them (it ends the fault phase at two thirds of it, and the run
// at it). So a path is pruned at a state a smaller path reached, at any
// depth, with two provisions:
//
//   - a visit never prunes a path that passed through it (its key is a
//     prefix of the path's): such a path reached the state again by a
//     cycle, and the visit's futures are this very path's, not yet
//     explored (a livelock that loops through one state would otherwise be
//     cut at its second lap, never reaching the step bound that reports
//     it);
//   - at the end of the search, boundsHeld checks that the step bound cut
//     none of the futures a merge at a different depth relied on, and if
//     it cannot show that, the search runs again with exact merging
//     (only states reached at the same depth, as when the step count was
//     part of the fingerprint).
type visitedTable struct {
	mu    sync.Mutex
	m     map[uint64]*visit
	exact bool
	less  func(a, b path) bool // the search's order
}

// visit is a path that reached a state: its fault choices so far, the
// depth (steps taken), and the run that took it.
type visit struct {
	key   path
	depth int
	run   *runRecord
}

// claim returns nil when the path key may go on from state h at depth, and
// records it where it is the smallest path so far; otherwise it returns
// the visit of the smaller path that prunes it. A smaller path arriving
// later goes on and takes the state over (exhaustSearch: the smallest
// violating schedule is never pruned).
func (v *visitedTable) claim(h uint64, key path, depth int, run *runRecord) *visit {
	if v.exact {
		h = mix(h ^ uint64(depth+1)*0x9e3779b97f4a7c15)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	old := v.m[h]
	if old != nil && !v.less(key, old.key) {
		if !isPrefix(old.key, key) {
			return old
		}
		return nil // a cycle through the recorded visit: go on
	}
	v.m[h] = &visit{key: key, depth: depth, run: run}
	return nil
}

// len is the number of distinct states reached.
func (v *visitedTable) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.m)
}

// runRecord is what one schedule of a search leaves for boundsHeld: its
// item, where its fault phase and its run ended, or the visit that pruned
// it and its depth there.
type runRecord struct {
	prefix   path
	faultEnd int // steps taken when the fault phase ended (or the run, if it stopped in it)
	end      int // steps taken when the run ended
	prunedBy *visit
	prunedAt int
}

// boundsHeld reports whether every merge at a different depth in the search
// kept the futures it relied on: for each path pruned at depth a by a visit
// at depth b != a, every continuation of the visit (the runs through it, a
// pruned one continued through the visit that pruned it, and so on) ended
// its fault phase within r_f and its run within r steps after the visit,
// with max(a,b)+r_f < settleAt and max(a,b)+r < maxSteps. Then neither the
// visit's continuations nor the pruned path's (the same ones, a-b steps
// later) met the forced end of the fault phase or the step bound, and
// both behaved alike step for step. It returns false when that cannot be
// shown.
//
// The runs through a visit are the run that recorded it (from the visit
// on) and every run whose item extends the visit's key: those replay the
// same choices up to the visit and branch after it.
func boundsHeld(runs []*runRecord, settleAt, maxSteps int) bool {
	type node struct {
		children map[int]*node
		run      *runRecord
		done     bool
		fault    int // the latest fault-phase end and run end below, -1 none
		end      int
	}
	root := &node{}
	for _, r := range runs {
		n := root
		for _, k := range r.prefix.dense() {
			if n.children == nil {
				n.children = map[int]*node{}
			}
			if n.children[k] == nil {
				n.children[k] = &node{}
			}
			n = n.children[k]
		}
		n.run = r
	}
	type span struct{ fault, end int }
	const inProgress = -2
	rem := map[*visit]span{}
	var remaining func(v *visit) (span, bool)
	var below func(n *node) (span, bool)
	// endOf is where run r's continuation ended, following the visits that
	// pruned it.
	endOf := func(r *runRecord) (span, bool) {
		if r.prunedBy == nil {
			return span{r.faultEnd, r.end}, true
		}
		s, ok := remaining(r.prunedBy)
		return span{r.prunedAt + s.fault, r.prunedAt + s.end}, ok
	}
	below = func(n *node) (span, bool) {
		if n.done {
			return span{n.fault, n.end}, true
		}
		m := span{-1, -1}
		for _, c := range n.children {
			if c.run != nil {
				s, ok := endOf(c.run)
				if !ok {
					return m, false
				}
				m = span{max(m.fault, s.fault), max(m.end, s.end)}
			}
			s, ok := below(c)
			if !ok {
				return m, false
			}
			m = span{max(m.fault, s.fault), max(m.end, s.end)}
		}
		n.done, n.fault, n.end = true, m.fault, m.end
		return m, true
	}
	// remaining is how many steps after visit v its continuations ended
	// the fault phase and the run, at most.
	remaining = func(v *visit) (span, bool) {
		if s, ok := rem[v]; ok {
			return s, s.fault != inProgress
		}
		rem[v] = span{inProgress, inProgress} // a cycle of merges: nothing is shown
		m, ok := endOf(v.run)
		if !ok {
			return m, false
		}
		n := root
		for _, k := range v.key.dense() {
			if n = n.children[k]; n == nil {
				break
			}
		}
		if n != nil {
			s, ok := below(n)
			if !ok {
				return s, false
			}
			m = span{max(m.fault, s.fault), max(m.end, s.end)}
		}
		s := span{m.fault - v.depth, m.end - v.depth}
		rem[v] = s
		return s, true
	}
	for _, r := range runs {
		if r.prunedBy == nil || r.prunedAt == r.prunedBy.depth {
			continue // an exact merge: the same state at the same depth
		}
		s, ok := remaining(r.prunedBy)
		deeper := max(r.prunedAt, r.prunedBy.depth)
		if !ok || deeper+s.fault >= settleAt || deeper+s.end >= maxSteps {
			return false
		}
	}
	return true
}

// dfsChooser replays a prefix of fault decisions and otherwise follows the
// default schedule. It decides from the decisions alone (their options,
// the events since the previous one, the state fingerprint) and its own
// state, and ends a run it prunes by answering model.Prune.
type dfsChooser struct {
	prefix path
	// taken and widths are the choice and the number of options at each
	// fault decision so far, faultsTaken the non-default choices among
	// them (the faults injected in this schedule): the visits and items
	// this schedule records are made from it (appended to only, so the
	// paths made from it may share it).
	taken       []int
	widths      []int
	faultsTaken []pathFault
	// depth is the number of decisions so far: before the settle phase
	// every step is a decision, so it is the world's step count.
	depth  int
	paused bool // a watch cache is paused (a resume option is offered)
	// replayed is the steps taken before the prefix's last fault: those
	// the parent schedule ran too (Report.Replayed, less the resumed ones).
	replayed  int
	marks     stepMarks
	full      bool // Options.NoReduce: every enabled fault at every decision
	stranding bool // Options.offerStranding: offer the crashes that strand a pause
	maxFaults int
	visited   *visitedTable
	dedup     bool
	shards    int
	skipped   bool
	run       *runRecord

	// checkpoints: the schedules this one opens resume from checkpoints
	// of its world (not Options.NoResume); world is that world. points
	// holds, per fault decision, the checkpoint the items opened there
	// resume from: the one taken there, or, where none could be taken (a
	// reconcile in flight), the last one before it (last), so that they
	// replay only the steps in between. resumed is the step count of the
	// checkpoint this schedule resumed from (Report.Resumed).
	checkpoints bool
	live        *atomic.Int64 // treeSearch.checkpoints
	world       *simulator.World
	points      []*resumePoint
	last        *resumePoint
	resumed     int
}

// resumePoint is a checkpoint of a schedule's world at a fault decision,
// with what the dfsChooser knew when it was asked that decision: the
// first at choices and widths, the faults among them, the steps taken.
// Several items share one; none changes it.
type resumePoint struct {
	cp            *simulator.Checkpoint
	at            int
	taken, widths []int
	faultsTaken   []pathFault
	depth         int
	refs          int // the items in the queue that resume from it (under treeSearch.mu)
}

// enter sets a fresh chooser to where the checkpoint's was, before the
// decision the checkpoint was taken at.
func (p *resumePoint) enter(c *dfsChooser) {
	c.taken, c.widths, c.faultsTaken = p.taken, p.widths, p.faultsTaken
	c.depth, c.resumed, c.last = p.depth, p.depth, p
	c.marks.first = p.depth == 0
}

// checkpointSpacing is the fewest steps between two checkpoints of one
// schedule. A checkpoint costs about what a few dozen steps do (its maps,
// the events since the previous one, a fork of the property monitors,
// and resuming rebuilds the world from them), and it keeps the objects of
// its state alive while its items wait. Measured on zookeeper/fixed (two
// workers, before maxCheckpoints bounded them; docs/benchmarks.md):
// spacing 1 took 75.9 s of CPU and 926 MB, 8 68.1 s, 16 71.4 s, 32
// 66.7-66.8 s and 632-643 MB, 64 69.0 s; no checkpoints 89.2 s and 434 MB.
const checkpointSpacing = 32

// maxCheckpoints bounds the checkpoints the items waiting in the queue
// resume from, and so the memory they keep alive: past it, a schedule
// takes no new one, and the items it opens resume from an older one or
// replay from the start. Measured (docs/benchmarks.md): zookeeper/fixed
// took 28.1-28.7 s and 489-501 MB with 2,048, 29.3 s with 512, 37.5 s and
// 648 MB with 4,096, 32.3-39.0 s and 626-650 MB unbounded; with
// crashes=2 stale=2, 84.1 s and 530 MB, 94.1 s, 122.8 s and 113.8 s and
// 1.76 GB: the collector's work on the objects they keep alive costs
// more than the replays they save.
const maxCheckpoints = 2048

// resumeFrom is the checkpoint the items opened at fault decision d
// resume from, nil for none.
func (c *dfsChooser) resumeFrom(d int) *resumePoint {
	if d < len(c.points) {
		return c.points[d]
	}
	return nil
}

// checkpoint notes the checkpoint the items opened at the current fault
// decision (at, the steps taken so far: depth) resume from, taking one
// when it opens items and the world can be copied.
func (c *dfsChooser) checkpoint(at, depth int) {
	for len(c.points) < at {
		c.points = append(c.points, nil) // replayed decisions open no items
	}
	if c.checkpoints && at >= c.prefix.len() && (c.last == nil || depth-c.last.depth >= checkpointSpacing) && c.live.Load() < maxCheckpoints {
		if cp, ok := c.world.Checkpoint(); ok {
			n := len(c.faultsTaken)
			c.last = &resumePoint{cp: cp, at: at, taken: c.taken[:at:at], widths: c.widths[:at:at], faultsTaken: c.faultsTaken[:n:n], depth: depth}
		}
	}
	c.points = append(c.points, c.last)
}

func (c *dfsChooser) Choose(d model.Decision) int {
	if d.Kind != model.ChooseStep {
		return 0
	}
	depth := c.depth
	c.depth++
	steps := d.Options
	def := defaultStep(steps)
	c.marks.scan(d.Since)
	c.paused = false
	for i := range steps {
		if steps[i].Class == model.StepResume {
			c.paused = true
		}
	}
	// Without reduction every decision is a fault decision; with it, a
	// decision after steps independent of every fault is none.
	point := c.full || c.marks.any() || c.marks.evictionDependent(steps)
	var faults []int
	if point && len(c.faultsTaken) < c.maxFaults {
		for i := range steps {
			if steps[i].Fault != 0 && c.offer(&steps[i]) {
				faults = append(faults, i)
			}
		}
	}
	c.marks.reset()
	if !point {
		return def
	}
	// Dedup at every point where a fault could matter, also once the
	// faults are spent: a state reached again has the same futures (or
	// fewer), which the smaller path that reached it explores (its items
	// with more faults after this point included). The future also
	// depends on the search's own state: the faults left (so only paths
	// with as many faults so far merge) and which faults are offered now
	// (a state reached right after a write offers a crash; the same state
	// reached otherwise may not). With shards, only states after a first
	// fault are merged: their whole future belongs to the shard dealt that
	// first fault, while the schedule without faults opens every shard's.
	if !c.goesOn(depth, d.Fingerprint, faults) {
		return model.Prune
	}
	if len(faults) == 0 {
		return def
	}
	at := len(c.taken)
	c.checkpoint(at, depth)
	opt := 0
	// The faults taken so far are the prefix's first ones: the next to
	// replay is the one after them.
	if f, n := c.prefix.faults, len(c.faultsTaken); n < len(f) && int(f[n].at) == at {
		opt = int(f[n].opt)
	}
	c.taken = append(c.taken, opt)
	c.widths = append(c.widths, 1+len(faults))
	if opt == 0 {
		return def
	}
	c.faultsTaken = append(c.faultsTaken, pathFault{int32(at), int32(opt)})
	if len(c.faultsTaken) == len(c.prefix.faults) {
		c.replayed = depth
	}
	return faults[opt-1]
}

// goesOn claims the state at depth (its fingerprint, and the faults
// offered there) for this path in the visited table, and reports whether
// the path may go on from it: false when a smaller path reached it first,
// which then prunes this one.
func (c *dfsChooser) goesOn(depth int, fingerprint func() (uint64, bool), faults []int) bool {
	if len(c.taken) < c.prefix.len() || !c.dedup || (c.shards > 1 && len(c.faultsTaken) == 0) {
		return true
	}
	h, ok := fingerprint()
	if !ok {
		return true
	}
	h ^= uint64(c.maxFaults-len(c.faultsTaken)) * 0x9e3779b97f4a7c15
	h = mixFaults(h, faults)
	key := path{n: int32(len(c.taken)), faults: c.faultsTaken[:len(c.faultsTaken):len(c.faultsTaken)]}
	if by := c.visited.claim(h, key, depth, c.run); by != nil {
		c.run.prunedBy, c.run.prunedAt = by, depth
		return false
	}
	return true
}

// SettleStarts implements simulator.SettleMerger: the settle phase's first
// state is claimed like a decision's, with no fault offered (the
// fingerprint carries the phase, so it never matches a fault-phase
// state). Before the settle phase every step is a decision, so steps is
// the depth.
func (c *dfsChooser) SettleStarts(steps int, fingerprint func() (uint64, bool)) bool {
	return c.goesOn(steps, fingerprint, nil)
}

// offer says whether an enabled fault is offered at this decision: every
// one without reduction; with it, only one the steps since the previous
// decision do not commute with, that is no mirror image of another, that
// something can observe and that does not make a pause one nobody saw
// (reduction.go).
func (c *dfsChooser) offer(f *model.Option) bool {
	return c.full || !c.marks.independent(f) && !symmetric(f, c.paused) && !unobserved(f) && (c.stranding || !strands(f))
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

// covered estimates the explored part of the space: each number of faults
// up to the budget is an equal share (level: the faults of the items run
// now, or the level of the iterative deepening), and within it the
// depth-first position is read as a fraction (the first decision's option
// over its width, plus the second's over the product of both widths, and
// so on).
func covered(level, levels int, taken, widths []int) float64 {
	frac, scale := 0.0, 1.0
	for i := range taken {
		scale /= float64(widths[i])
		frac += float64(taken[i]) * scale
	}
	return (float64(level) + frac) / float64(levels+1)
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
