package traces

import (
	"github.com/opcheck/opcheck/model"
)

// DefaultShrinkRuns bounds how many times Shrink runs the system.
const DefaultShrinkRuns = 2000

// ShrinkStats says what shrinking did.
type ShrinkStats struct {
	// Runs is how many times the runner was called.
	Runs          int
	BeforeEvents  int
	AfterEvents   int
	BeforeChoices int
	AfterChoices  int
}

// Shrink looks for a smaller trace that breaks the same property as t,
// running at most DefaultShrinkRuns schedules. See ShrinkN.
func Shrink(t *Trace, run func(choices []model.Choice) (*Trace, bool)) (*Trace, ShrinkStats) {
	return ShrinkN(t, run, DefaultShrinkRuns)
}

// ShrinkN shrinks t with delta debugging over its choice stream, calling
// run at most maxRuns times (maxRuns <= 0 means DefaultShrinkRuns).
//
// It alternates two passes until neither helps or the budget is spent:
// ddmin, which removes chunks of choices (halves, then quarters, ... down to
// single choices), and zeroing, which replaces each choice's value by 0,
// the first alternative. A candidate is kept when run reports that it still
// breaks the property (and, when both traces name it, the same property) and
// it is smaller: fewer events first, then fewer choices, then smaller
// values. Trailing choices of value 0 are dropped from the result, since a
// replay falls back to 0 when the list runs out.
//
// The result is t itself when nothing smaller was found; Shrink never
// modifies t.
func ShrinkN(t *Trace, run func(choices []model.Choice) (*Trace, bool), maxRuns int) (*Trace, ShrinkStats) {
	if maxRuns <= 0 {
		maxRuns = DefaultShrinkRuns
	}
	s := &shrinker{
		run:   run,
		max:   maxRuns,
		seen:  map[string]bool{},
		best:  t,
		cur:   trimZeros(t.Choices),
		stats: ShrinkStats{BeforeEvents: len(t.Events), BeforeChoices: len(t.Choices)},
	}
	if t.Violation != nil {
		s.property = t.Violation.Property
	}
	s.seen[model.FormatChoices(s.cur)] = true
	for s.runs < s.max {
		improved := s.ddmin()
		if s.zero() {
			improved = true
		}
		if !improved {
			break
		}
	}
	s.stats.Runs = s.runs
	s.stats.AfterEvents = len(s.best.Events)
	s.stats.AfterChoices = len(s.best.Choices)
	return s.best, s.stats
}

type shrinker struct {
	run      func([]model.Choice) (*Trace, bool)
	max      int
	runs     int
	property string
	seen     map[string]bool // candidates already run (as FormatChoices)
	best     *Trace
	cur      []model.Choice // best's choice list, trailing zeros trimmed
	stats    ShrinkStats
}

// try runs a candidate and keeps it when it still violates and is smaller.
func (s *shrinker) try(cand []model.Choice) bool {
	cand = trimZeros(cand)
	key := model.FormatChoices(cand)
	if s.seen[key] || s.runs >= s.max {
		return false
	}
	s.seen[key] = true
	s.runs++
	nt, ok := s.run(cand)
	if !ok || nt == nil {
		return false
	}
	if s.property != "" && nt.Violation != nil && nt.Violation.Property != s.property {
		return false
	}
	choices := trimZeros(nt.Choices)
	if !smaller(len(nt.Events), choices, len(s.best.Events), s.cur) {
		return false
	}
	out := *nt
	out.Choices = choices
	s.best, s.cur = &out, choices
	s.seen[model.FormatChoices(choices)] = true
	return true
}

// smaller orders candidates: fewer events, then fewer choices, then the
// smaller value sum, then the lexicographically smaller value list.
func smaller(ev int, cs []model.Choice, bestEv int, best []model.Choice) bool {
	if ev != bestEv {
		return ev < bestEv
	}
	if len(cs) != len(best) {
		return len(cs) < len(best)
	}
	sum := func(xs []model.Choice) (n int) {
		for _, c := range xs {
			n += c.Value
		}
		return n
	}
	if a, b := sum(cs), sum(best); a != b {
		return a < b
	}
	for i := range cs {
		if cs[i].Value != best[i].Value {
			return cs[i].Value < best[i].Value
		}
	}
	return false
}

// ddmin removes chunks of the current choice list, Zeller's delta debugging
// restricted to complements (and subsets when there are more than two).
func (s *shrinker) ddmin() bool {
	improved := false
	n := 2
	for len(s.cur) > 0 && s.runs < s.max {
		if n > len(s.cur) {
			n = len(s.cur)
		}
		chunks := split(len(s.cur), n)
		reduced := false
		if n > 2 {
			for _, c := range chunks {
				if s.try(clone(s.cur[c[0]:c[1]])) {
					n, reduced = 2, true
					break
				}
			}
		}
		if !reduced {
			for _, c := range chunks {
				cand := append(clone(s.cur[:c[0]]), s.cur[c[1]:]...)
				if s.try(cand) {
					n, reduced = max(n-1, 2), true
					break
				}
			}
		}
		if reduced {
			improved = true
			continue
		}
		if n >= len(s.cur) {
			break
		}
		n = min(2*n, len(s.cur))
	}
	return improved
}

// zero replaces choice values by 0, one at a time, from the end (where a
// zero may let the list be trimmed).
func (s *shrinker) zero() bool {
	improved := false
	for i := len(s.cur) - 1; i >= 0 && s.runs < s.max; i-- {
		if i >= len(s.cur) || s.cur[i].Value == 0 {
			continue
		}
		cand := clone(s.cur)
		cand[i].Value = 0
		if s.try(cand) {
			improved = true
		}
	}
	return improved
}

// split cuts [0, length) into n nearly equal [start, end) chunks.
func split(length, n int) [][2]int {
	out := make([][2]int, 0, n)
	start := 0
	for i := 0; i < n; i++ {
		end := start + (length-start)/(n-i)
		if end == start {
			continue
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

func clone(cs []model.Choice) []model.Choice { return append([]model.Choice(nil), cs...) }

// trimZeros drops trailing choices of value 0 (a replay falls back to 0).
func trimZeros(cs []model.Choice) []model.Choice {
	n := len(cs)
	for n > 0 && cs[n-1].Value == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return cs[:n:n]
}
