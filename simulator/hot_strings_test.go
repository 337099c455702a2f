package simulator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// TestSelectorTextIsString: the text a client's List records for a label
// selector (cached by requirements) is the selector's String(), for
// selectors of every operator built afresh and asked again and again (12
// kinds of them, past the cache's bound), after the caller changed the
// values it built the earlier ones from.
func TestSelectorTextIsString(t *testing.T) {
	c := NewCluster(testScheme(), ClusterOptions{}).Client("user", 1, true)
	r := rand.New(rand.NewPCG(14, 5))
	ops := []selection.Operator{selection.Equals, selection.DoubleEquals, selection.NotEquals, selection.In, selection.NotIn, selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan}
	type part struct {
		key  string
		op   selection.Operator
		vals []string
	}
	var recipes [][]part
	for len(recipes) < 12 {
		var recipe []part
		for n := r.IntN(3) + 1; n > 0; n-- {
			p := part{key: []string{"app", "tier", "ray.io/node-type"}[r.IntN(3)], op: ops[r.IntN(len(ops))]}
			switch p.op {
			case selection.Exists, selection.DoesNotExist:
			case selection.GreaterThan, selection.LessThan:
				p.vals = []string{[]string{"1", "2"}[r.IntN(2)]}
			case selection.In, selection.NotIn:
				p.vals = []string{"a", []string{"b", "c"}[r.IntN(2)]}[:r.IntN(2)+1]
			default:
				p.vals = []string{[]string{"a", "b"}[r.IntN(2)]}
			}
			recipe = append(recipe, p)
		}
		recipes = append(recipes, recipe)
	}
	hits := 0
	for i := 0; i < 2000; i++ {
		sel := labels.NewSelector()
		var values [][]string
		for _, p := range recipes[r.IntN(len(recipes))] {
			vals := slices.Clone(p.vals)
			req, err := labels.NewRequirement(p.key, p.op, vals)
			if err != nil {
				t.Fatal(err)
			}
			sel = sel.Add(*req)
			values = append(values, vals)
		}
		reqs, _ := sel.Requirements()
		for _, cached := range c.selectors {
			if requirementsEqual(cached.reqs, reqs) {
				hits++
				break
			}
		}
		if got, want := c.selectorText(sel), sel.String(); got != want {
			t.Fatalf("selector %d: text %q, String() %q", i, got, want)
		}
		// The caller reuses its value slices: the cached requirements
		// must not follow.
		for _, vals := range values {
			for j := range vals {
				vals[j] = "changed"
			}
		}
	}
	if hits < 500 || hits > 1900 || len(c.selectors) != maxRenderedSelectors {
		t.Fatalf("%d cache hits of 2,000, %d selectors cached: the cache was not exercised both ways", hits, len(c.selectors))
	}
}

// TestUIDOfIsTheFormat: uidOf writes what fmt's %012d after the prefix
// writes, for short, 12-digit and longer counts.
func TestUIDOfIsTheFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 6))
	ns := []uint64{0, 1, 9, 10, 99, 123456789012, 999999999999, 1000000000000, 1<<64 - 1}
	for i := 0; i < 1000; i++ {
		ns = append(ns, r.Uint64()>>r.UintN(64))
	}
	for _, n := range ns {
		if got, want := string(uidOf(n)), fmt.Sprintf("00000000-0000-4000-8000-%012d", n); got != want {
			t.Fatalf("uidOf(%d) = %q, want %q", n, got, want)
		}
	}
}
