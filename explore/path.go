package explore

import "slices"

// path is a prefix of the exhaustive search's fault-decision choices: at
// each fault decision of a schedule, 0 for the default step or i for the
// i-th fault offered there. Items, visits and run records are paths, and a
// long search keeps hundreds of thousands of them until it ends (the
// queue, the visited table, boundsHeld's records). A schedule passes a
// fault decision at almost every step of its fault phase but takes at most
// the budget's few faults, so a path is kept sparse: its length and its
// non-default choices. Held densely (an int per decision), they were most
// of a search's live heap: 1.1 to 2.7 KB per schedule on zookeeper/fixed
// with crashes=2 stale=2 (docs/benchmarks.md, "Memory of the exhaustive
// search").
//
// A path's faults slice is never written after the path is made, so paths
// share backing arrays freely.
type path struct {
	n      int32       // the number of fault decisions it covers
	faults []pathFault // its non-default choices, by increasing position
}

// pathFault is one non-default choice of a path: option opt at fault
// decision at.
type pathFault struct{ at, opt int32 }

// pathOf is the path of a dense prefix of choices.
func pathOf(dense []int) path {
	p := path{n: int32(len(dense))}
	for i, o := range dense {
		if o != 0 {
			p.faults = append(p.faults, pathFault{int32(i), int32(o)})
		}
	}
	return p
}

// len is the number of fault decisions the path covers.
func (p path) len() int { return int(p.n) }

// dense is the path as one choice per fault decision.
func (p path) dense() []int {
	d := make([]int, p.n)
	for _, f := range p.faults {
		d[f.at] = int(f.opt)
	}
	return d
}

// faultsIn is the number of faults a path takes.
func (p path) faultsIn() int { return len(p.faults) }

// child is the path that follows the first d choices of a schedule whose
// faults (non-default choices, by position) are taken, then takes option
// opt at decision d: an item the schedule opens.
func child(taken []pathFault, d, opt int) path {
	k := 0
	for k < len(taken) && int(taken[k].at) < d {
		k++
	}
	faults := make([]pathFault, k+1)
	copy(faults, taken[:k])
	faults[k] = pathFault{int32(d), int32(opt)}
	return path{n: int32(d + 1), faults: faults}
}

// lessKey orders paths depth first: lexicographically by their dense
// choices, a prefix before its extensions. The first position where two
// paths differ is the first at which one of them has a fault the other
// lacks (or has with another option); zeros elsewhere compare equal.
func lessKey(a, b path) bool {
	common := min(a.n, b.n)
	i, j := 0, 0
	for {
		at := common // no difference before the common length
		var av, bv int32
		switch {
		case i < len(a.faults) && j < len(b.faults) && a.faults[i].at == b.faults[j].at:
			if a.faults[i].opt == b.faults[j].opt {
				i, j = i+1, j+1
				continue
			}
			at, av, bv = a.faults[i].at, a.faults[i].opt, b.faults[j].opt
		case i < len(a.faults) && (j == len(b.faults) || a.faults[i].at < b.faults[j].at):
			at, av = a.faults[i].at, a.faults[i].opt
		case j < len(b.faults):
			at, bv = b.faults[j].at, b.faults[j].opt
		}
		if at < common {
			return av < bv
		}
		return a.n < b.n
	}
}

// lessItem is the search's order: fewer faults first, then depth first.
func lessItem(a, b path) bool {
	if fa, fb := a.faultsIn(), b.faultsIn(); fa != fb {
		return fa < fb
	}
	return lessKey(a, b)
}

// isPrefix reports whether a is a prefix of b (or equal).
func isPrefix(a, b path) bool {
	if a.n > b.n {
		return false
	}
	k := 0
	for k < len(b.faults) && b.faults[k].at < a.n {
		k++
	}
	return slices.Equal(a.faults, b.faults[:k])
}
