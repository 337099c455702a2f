package explore

import (
	"fmt"
	"math/rand/v2"

	"github.com/opcheck/opcheck/model"
)

// Strategy names accepted by Options.Strategy and the CLI's -strategy.
const (
	// StrategyRandom: Random (fault coin).
	StrategyRandom = "random"
	// StrategyUniform: Uniform, every alternative equally likely,
	// faults included. Kept as the baseline the fault coin is measured
	// against.
	StrategyUniform = "uniform"
	// StrategyPCT: PCT (fault coin).
	StrategyPCT = "pct"
	// StrategyExhaustive: the bounded depth-first search of exhaustive.go.
	// It is not a per-schedule chooser: Explore runs it as a whole.
	StrategyExhaustive = "exhaustive"
)

// PCT defaults used by Explore.
const (
	// DefaultPCTDepth is the bug depth d: d-1 priority change points.
	DefaultPCTDepth = 3
	// DefaultPCTSteps is the step count k the change points are drawn
	// from. It is a fixed number, not measured, so that a schedule depends
	// on its seed alone. The shipped scenarios make a few hundred step
	// choices per schedule.
	DefaultPCTSteps = 300
)

// faultRates are the per-schedule probabilities of the fault coin; each
// schedule draws one. Low rates keep a fault window (a paused cache) open
// for long, high ones inject faults early.
var faultRates = [...]float64{1.0 / 2, 1.0 / 4, 1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128, 1.0 / 256}

// newRand returns a PCG generator for one seed, with the seed mixed by
// splitmix64 first so that consecutive seeds give unrelated streams.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(seed), mix(seed^0x9e3779b97f4a7c15)))
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// quietSpan is how many step decisions in a row without a change (see
// changed) double the fault coin's rate. In such a run the controllers
// repeat the same laps (a reconcile against a paused cache that conflicts
// and requeues, for instance): more of them explores nothing new, and only
// a fault (a resume, a crash, the settle decision) ends the run. 32 is a
// few such laps of the zookeeper controller: shorter spans (16, or going
// straight to 1/2) found the zookeeper seed bug in markedly fewer
// schedules, for only a few percent fewer steps per schedule
// (docs/benchmarks.md).
const quietSpan = 32

// faultCoin separates fault steps (actor model.ActorFault: crashes, cache
// pauses and resumes, drops, evictions, the settle decision) from ordinary
// steps. Uniform choice over all alternatives spends the whole fault budget
// in the first few steps, because at the start most alternatives are
// faults; the coin instead takes a fault step with probability rate, drawn
// once per schedule from faultRates. The rate doubles, up to 1/2, for every
// quietSpan decisions in a row during which nothing changed, and falls back
// to the drawn rate at the next change.
type faultCoin struct {
	rate float64
	// off makes every option count as ordinary (strategy "uniform").
	off bool
	// quiet counts the step decisions in a row whose events (Since)
	// changed nothing.
	quiet int
}

// changed reports whether events changed the store, stepped an external
// system or injected a fault: what makes the next laps of the controllers
// differ from the last ones.
func changed(events []model.Event) bool {
	for i := range events {
		e := &events[i]
		if e.Change != model.ChangeNone || e.Op == model.OpExternal || e.Actor == model.ActorFault {
			return true
		}
	}
	return false
}

// observe counts d as a quiet decision or resets the count.
func (c *faultCoin) observe(d *model.Decision) {
	if changed(d.Since) {
		c.quiet = 0
	} else {
		c.quiet++
	}
}

// currentRate is the drawn rate, doubled for every quietSpan quiet
// decisions, at most 1/2.
func (c *faultCoin) currentRate() float64 {
	rate := c.rate
	for n := c.quiet / quietSpan; n > 0 && rate < 0.5; n-- {
		rate *= 2
	}
	return rate
}

// fault tosses the coin: true takes a fault step.
func (c *faultCoin) fault(r *rand.Rand) bool {
	return r.Float64() < c.currentRate()
}

// split returns the indices of the ordinary and the fault options of d,
// or ok=false when the coin is off.
func (c *faultCoin) split(d *model.Decision, ord, flt []int) ([]int, []int, bool) {
	if c.off {
		return nil, nil, false
	}
	for i := range d.Options {
		if d.Options[i].Actor == model.ActorFault {
			flt = append(flt, i)
		} else {
			ord = append(ord, i)
		}
	}
	return ord, flt, true
}

// Random returns the Chooser of strategy "random" seeded with seed: a step
// choice first tosses the fault coin (probability drawn per schedule from
// 1/2 to 1/256, raised while nothing changes: see faultCoin) to pick
// between the fault options and the ordinary ones (model.Option.Actor),
// and then picks uniformly within that group. The same seed gives the
// same choices.
func Random(seed uint64) model.Chooser {
	r := newRand(seed)
	return &random{r: r, coin: faultCoin{rate: faultRates[r.IntN(len(faultRates))]}}
}

// Uniform returns the Chooser of strategy "uniform": Random's stream with
// the coin off, every option equally likely, faults included.
func Uniform(seed uint64) model.Chooser {
	c := Random(seed).(*random)
	c.coin.off = true
	return c
}

type random struct {
	r        *rand.Rand
	coin     faultCoin
	ord, flt []int
}

func (c *random) Choose(d model.Decision) int {
	n := len(d.Options)
	if d.Kind == model.ChooseStep {
		c.coin.observe(&d)
		ord, flt, ok := c.coin.split(&d, c.ord[:0], c.flt[:0])
		c.ord, c.flt = ord, flt
		if ok && len(ord) > 0 && len(flt) > 0 {
			if c.coin.fault(c.r) {
				return flt[c.r.IntN(len(flt))]
			}
			return ord[c.r.IntN(len(ord))]
		}
	}
	return c.r.IntN(n)
}

// PCT returns a Chooser implementing probabilistic concurrency testing
// (Burckhardt et al., ASPLOS 2010), adapted to opcheck's step choices.
//
// PCT needs thread identities with priorities. opcheck's scheduler offers
// the enabled steps as a list in a fixed order (controllers, built-in and
// external actors, the user, faults, the clock), so the adaptation treats a
// position in that list as the "thread": every position p gets a random
// priority, distinct, >= depth, drawn the first time p is offered. A step
// choice takes the enabled position with the highest priority. depth-1
// change points are drawn uniformly from [1, maxSteps]; at the k-th step
// choice, if k is the i-th change point, the position just chosen gets
// priority i (below every initial priority), so another position takes
// over.
//
// Fault steps (the fault options of the decision) are decided by the fault
// coin as in Random (uniform among the fault steps) and priorities order
// the ordinary steps only.
//
// The adaptation differs from the paper: a position is not a stable actor
// (a controller that stops being enabled shifts the positions after it),
// so the paper's bound (a depth-d bug found with probability at least
// 1/(n k^(d-1))) is not claimed.
func PCT(seed uint64, depth, maxSteps int) model.Chooser {
	if depth < 1 {
		depth = 1
	}
	if maxSteps < 1 {
		maxSteps = 1
	}
	r := newRand(seed)
	c := &pct{r: r, depth: depth, change: map[int]int{}, used: map[int]bool{}}
	c.coin.rate = faultRates[r.IntN(len(faultRates))]
	for i := 1; i < depth; i++ {
		c.change[1+r.IntN(maxSteps)] = i
	}
	return c
}

type pct struct {
	r        *rand.Rand
	depth    int
	prio     []int        // priority of each position; larger runs first
	used     map[int]bool // initial priorities taken
	change   map[int]int  // step number -> lowered priority
	steps    int
	coin     faultCoin
	ord, flt []int
}

func (c *pct) Choose(d model.Decision) int {
	n := len(d.Options)
	if d.Kind != model.ChooseStep {
		return c.r.IntN(n)
	}
	c.coin.observe(&d)
	ord, flt, ok := c.coin.split(&d, c.ord[:0], c.flt[:0])
	c.ord, c.flt = ord, flt
	if ok && len(flt) > 0 && (len(ord) == 0 || c.coin.fault(c.r)) {
		return flt[c.r.IntN(len(flt))]
	}
	if !ok {
		ord = ord[:0]
		for i := 0; i < n; i++ {
			ord = append(ord, i)
		}
		c.ord = ord
	}
	for len(c.prio) < n {
		c.prio = append(c.prio, c.fresh())
	}
	best := ord[0]
	for _, p := range ord[1:] {
		if c.prio[p] > c.prio[best] {
			best = p
		}
	}
	c.steps++
	if low, ok := c.change[c.steps]; ok {
		c.prio[best] = low
	}
	return best
}

// fresh draws a distinct initial priority >= depth. The range grows with
// the positions drawn so far so the loop ends quickly.
func (c *pct) fresh() int {
	span := 4 * (len(c.prio) + 8)
	for {
		p := c.depth + c.r.IntN(span)
		if !c.used[p] {
			c.used[p] = true
			return p
		}
	}
}

// NewChooser returns the chooser of one schedule of a strategy.
func NewChooser(strategy string, seed uint64) (model.Chooser, error) {
	switch strategy {
	case "", StrategyRandom:
		return Random(seed), nil
	case StrategyUniform:
		return Uniform(seed), nil
	case StrategyPCT:
		return PCT(seed, DefaultPCTDepth, DefaultPCTSteps), nil
	case StrategyExhaustive:
		return nil, fmt.Errorf("strategy %q searches the whole bounded space and has no per-schedule chooser: run it with Explore", strategy)
	}
	return nil, fmt.Errorf("unknown strategy %q: use %q, %q, %q or %q", strategy, StrategyExhaustive, StrategyRandom, StrategyPCT, StrategyUniform)
}
