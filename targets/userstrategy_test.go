package targets_test

import (
	"math/rand/v2"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// A strategy of a user's own, written against model.Chooser alone: it sees
// each decision as data (options, events since the previous decision, the
// state fingerprint) and answers an option or model.Prune. No explore, no
// World.

// userDFS explores every placement of the fault budget at the decisions
// that follow a write of the controller under test, taking the first
// ordinary option otherwise, depth first; it prunes states already seen.
type userDFS struct {
	prefix, taken, widths []int
	wrote                 bool
	visited               map[uint64]bool
	pruned                bool
}

func (c *userDFS) Choose(d model.Decision) int {
	for _, e := range d.Since {
		if e.Actor.Group() == model.GroupController && e.Change != model.ChangeNone {
			c.wrote = true
		}
	}
	ordinary := -1
	var faults []int
	for i, o := range d.Options {
		switch {
		case o.Fault != 0:
			if c.wrote && o.Server <= 1 {
				faults = append(faults, i)
			}
		case ordinary < 0 && o.Actor != model.ActorFault:
			ordinary = i
		}
	}
	if ordinary < 0 {
		ordinary = 0 // only faults and the settle decision: settle is among them
		for i, o := range d.Options {
			if o.Class == model.StepSettle {
				ordinary = i
			}
		}
	}
	c.wrote = false
	// Prune a state seen before, with the same faults on offer: its
	// futures were explored from there. (Replayed prefixes are not
	// checked: they lead to the subtree being explored.)
	if len(c.taken) >= len(c.prefix) {
		if h, ok := d.Fingerprint(); ok {
			h ^= uint64(len(faults))
			for _, f := range faults {
				h = h*1099511628211 ^ uint64(f)
			}
			if c.visited[h] {
				c.pruned = true
				return model.Prune
			}
			c.visited[h] = true
		}
	}
	if len(faults) == 0 {
		return ordinary
	}
	opt := 0
	if len(c.taken) < len(c.prefix) {
		opt = c.prefix[len(c.taken)]
	}
	c.taken = append(c.taken, opt)
	c.widths = append(c.widths, 1+len(faults))
	if opt == 0 {
		return ordinary
	}
	return faults[opt-1]
}

// search runs userDFS over the whole tree of sc and returns whether a
// schedule broke a property, and how many schedules ran and were pruned.
func search(t *testing.T, sc *simulator.Scenario) (violated bool, runs, pruned int) {
	t.Helper()
	visited := map[uint64]bool{}
	var prefix []int
	for runs < 5000 {
		c := &userDFS{prefix: prefix, visited: visited}
		res, err := simulator.Run(sc, c, simulator.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		runs++
		if c.pruned {
			pruned++
		}
		if len(res.Violations) > 0 {
			return true, runs, pruned
		}
		i := len(c.taken) - 1
		for i >= 0 && c.taken[i] == c.widths[i]-1 {
			i--
		}
		if i < 0 {
			return false, runs, pruned
		}
		prefix = append(c.taken[:i:i], c.taken[i]+1)
	}
	t.Fatalf("%s: the search did not end in %d schedules", sc.Name, runs)
	return
}

func lookup(t *testing.T, name string) *simulator.Scenario {
	t.Helper()
	sc, err := targets.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestUserWrittenExhaustiveStrategy(t *testing.T) {
	if v, runs, _ := search(t, lookup(t, "casskop/buggy")); !v {
		t.Errorf("casskop/buggy: no violation in %d schedules", runs)
	}
	v, runs, pruned := search(t, lookup(t, "casskop/fixed"))
	if v {
		t.Errorf("casskop/fixed: a violation, want none")
	}
	if runs < 5 || pruned == 0 {
		t.Errorf("casskop/fixed: %d schedules, %d pruned: the search did not branch and prune", runs, pruned)
	}
	t.Logf("casskop/fixed: %d schedules, %d pruned", runs, pruned)
}

// userRandom takes a fault option with probability 1/2^k when there is
// one (k drawn per schedule from 1..8), else a uniformly random ordinary
// option.
type userRandom struct {
	r    *rand.Rand
	rate int
}

func (c userRandom) Choose(d model.Decision) int {
	var ord, flt []int
	for i, o := range d.Options {
		if o.Actor == model.ActorFault {
			flt = append(flt, i)
		} else {
			ord = append(ord, i)
		}
	}
	if len(flt) > 0 && (len(ord) == 0 || c.r.IntN(c.rate) == 0) {
		return flt[c.r.IntN(len(flt))]
	}
	return ord[c.r.IntN(len(ord))]
}

func TestUserWrittenRandomStrategy(t *testing.T) {
	sc := lookup(t, "casskop/buggy")
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 1))
		res, err := simulator.Run(sc, userRandom{r, 2 << r.IntN(8)}, simulator.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) > 0 {
			// The recorded choices replay the schedule.
			again, err := simulator.Run(sc, &model.Sequence{Choices: res.Choices}, simulator.RunOptions{})
			if err != nil || len(again.Violations) == 0 || again.Violations[0].Property != res.Violations[0].Property {
				t.Fatalf("seed %d: the recorded choices did not replay the violation (%v, %v)", seed, err, again.Violations)
			}
			t.Logf("casskop/buggy: %s after %d schedules", res.Violations[0].Property, seed+1)
			return
		}
	}
	t.Fatalf("casskop/buggy: no violation in 400 random schedules")
}
