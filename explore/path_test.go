package explore

import (
	"slices"
	"testing"
)

// The dense definitions the sparse paths must agree with: a path is a
// sequence of choices, one per fault decision, 0 for the default step.
func denseLessKey(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func denseFaults(a []int) int {
	n := 0
	for _, o := range a {
		if o != 0 {
			n++
		}
	}
	return n
}

func denseLessItem(a, b []int) bool {
	if fa, fb := denseFaults(a), denseFaults(b); fa != fb {
		return fa < fb
	}
	return denseLessKey(a, b)
}

func denseIsPrefix(a, b []int) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// every dense path of length up to 4 over the options 0, 1 and 2.
func smallDensePaths() [][]int {
	out := [][]int{{}}
	for n := 1; n <= 4; n++ {
		total := 1
		for range n {
			total *= 3
		}
		for code := range total {
			p := make([]int, n)
			for i, c := 0, code; i < n; i, c = i+1, c/3 {
				p[i] = c % 3
			}
			out = append(out, p)
		}
	}
	return out
}

// Every pair of small paths, with zeros and faults at every place (at the
// start, at the end, paths that are prefixes of each other, paths that
// differ only in an option): the sparse order, prefix test and fault count
// are the dense ones.
func TestSparsePathsOrderLikeDenseOnes(t *testing.T) {
	paths := smallDensePaths()
	if len(paths) != 1+3+9+27+81 {
		t.Fatalf("%d paths", len(paths))
	}
	for _, a := range paths {
		pa := pathOf(a)
		if got := pa.dense(); !slices.Equal(got, a) {
			t.Fatalf("pathOf(%v).dense() = %v", a, got)
		}
		if pa.len() != len(a) || pa.faultsIn() != denseFaults(a) {
			t.Fatalf("%v: len %d faults %d", a, pa.len(), pa.faultsIn())
		}
		for _, b := range paths {
			pb := pathOf(b)
			if got, want := lessKey(pa, pb), denseLessKey(a, b); got != want {
				t.Fatalf("lessKey(%v, %v) = %v, dense order says %v", a, b, got, want)
			}
			if got, want := lessItem(pa, pb), denseLessItem(a, b); got != want {
				t.Fatalf("lessItem(%v, %v) = %v, dense order says %v", a, b, got, want)
			}
			if got, want := isPrefix(pa, pb), denseIsPrefix(a, b); got != want {
				t.Fatalf("isPrefix(%v, %v) = %v, dense says %v", a, b, got, want)
			}
		}
	}
}

// child makes the item a schedule opens at decision d with option o: its
// first d choices, then o. It must neither lose a fault before d nor keep
// one at or after it, and must not write into the schedule's faults, which
// earlier visits share.
func TestChildIsTheScheduleCutAtTheDecision(t *testing.T) {
	for _, taken := range smallDensePaths() {
		sparse := pathOf(taken).faults
		before := slices.Clone(sparse)
		for d := range len(taken) {
			for o := 1; o <= 2; o++ {
				got := child(sparse, d, o)
				want := append(slices.Clone(taken[:d]), o)
				if !slices.Equal(got.dense(), want) || got.len() != d+1 || !slices.Equal(got.faults, pathOf(want).faults) {
					t.Fatalf("child(%v, %d, %d) = %v, want %v", taken, d, o, got.dense(), want)
				}
			}
		}
		if !slices.Equal(sparse, before) {
			t.Fatalf("child wrote into the schedule's faults: %v, was %v", sparse, before)
		}
	}
}
