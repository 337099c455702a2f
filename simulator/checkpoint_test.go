package simulator_test

import (
	"fmt"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// checkpointingChooser answers from a random chooser and takes a
// checkpoint of its world at every step decision where one can be taken,
// with the number of decisions before it and the state's fingerprint.
type checkpointingChooser struct {
	inner     model.Chooser
	world     *simulator.World
	decisions int
	points    []checkpointAt
	refused   int
}

type checkpointAt struct {
	cp          *simulator.Checkpoint
	decisions   int
	fingerprint uint64
	hashed      bool
}

func (c *checkpointingChooser) Choose(d model.Decision) int {
	if d.Kind == model.ChooseStep {
		if cp, ok := c.world.Checkpoint(); ok {
			h, hashed := d.Fingerprint()
			c.points = append(c.points, checkpointAt{cp: cp, decisions: c.decisions, fingerprint: h, hashed: hashed})
		} else {
			c.refused++
		}
	}
	c.decisions++
	return c.inner.Choose(d)
}

// run builds a world of sc that asks chooser (c, or a chooser that embeds
// c) and runs it to its end, c checkpointing it as it goes.
func (c *checkpointingChooser) run(t *testing.T, sc *simulator.Scenario, chooser model.Chooser, opts simulator.RunOptions) *simulator.Result {
	t.Helper()
	w, err := simulator.NewWorld(sc, chooser, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.world = w
	res, err := w.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fingerprintingSequence replays choices and notes the fingerprint of the
// first decision it is asked.
type fingerprintingSequence struct {
	model.Sequence
	asked       bool
	fingerprint uint64
	hashed      bool
}

func (s *fingerprintingSequence) Choose(d model.Decision) int {
	if !s.asked {
		s.asked = true
		s.fingerprint, s.hashed = d.Fingerprint()
	}
	return s.Sequence.Choose(d)
}

// TestCheckpointResumesTheSameSchedule checks World.Checkpoint and
// Checkpoint.Resume on the shipped scenarios: random schedules (faults
// included: crashes onto the other apiserver, paused caches, evictions,
// dropped events, watch expiries) are checkpointed at every decision where that is
// possible, and a world resumed from each checkpoint with the rest of the
// schedule's choices must record the same history, byte for byte (every
// event's line and object), the same choices and verdicts, and fingerprint
// the decision it resumes at as the original did. The checkpoints are
// resumed after the original run ended, so a checkpoint that shared
// anything the world went on changing would resume a later state. KubeRay
// (a Setup-built controller that keeps memory, on the wall clock) must be
// refused.
func TestCheckpointResumesTheSameSchedule(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 2
	}
	for _, sc := range targets.All() {
		t.Run(sc.Name, func(t *testing.T) {
			resumed := 0
			for seed := range uint64(seeds) {
				c := &checkpointingChooser{inner: newRandomChooser(seed + 1)}
				// Odd seeds spend a budget with every kind of fault, so
				// that checkpoints hold informers that lost events, and
				// caches a watch expiry relisted.
				var opts simulator.RunOptions
				if seed%2 == 1 {
					opts.Faults = &model.FaultBudget{Crashes: 2, Stale: 2, Drops: 2, Evictions: 1, Expiries: 1}
				}
				res := c.run(t, sc, c, opts)
				want := fingerprint(t, res)
				if sc.SyncWallClock {
					if len(c.points) > 0 {
						t.Fatalf("seed %d: %d checkpoints of a scenario whose controller a Setup builds", seed, len(c.points))
					}
					continue
				}
				if len(c.points) == 0 {
					t.Fatalf("seed %d: no decision of %d could be checkpointed (%d refused)", seed, c.decisions, c.refused)
				}
				for _, p := range c.points {
					// The resumed world is checkpointed in turn, and
					// its last checkpoint resumed: a checkpoint of a
					// resumed world shares the history of the one it
					// resumed from.
					seq := &fingerprintingSequence{Sequence: model.Sequence{Choices: res.Choices[p.decisions:]}}
					again, ok := resumeAndCompare(t, fmt.Sprintf("seed %d resumed at decision %d (step %d)", seed, p.decisions, p.cp.Steps()), p, seq, res, want)
					resumed++
					if !ok {
						continue
					}
					last := again.points[len(again.points)-1]
					last.decisions += p.decisions
					seq = &fingerprintingSequence{Sequence: model.Sequence{Choices: res.Choices[last.decisions:]}}
					resumeAndCompare(t, fmt.Sprintf("seed %d resumed at decision %d, then at %d (step %d)", seed, p.decisions, last.decisions, last.cp.Steps()), last, seq, res, want)
					resumed++
				}
			}
			t.Logf("%d resumed schedules", resumed)
		})
	}
}

// resumeAndCompare resumes p with seq, which replays the rest of res's
// choices, checkpointing the resumed world as it goes, and fails the test
// unless the run is res's (want its fingerprint). It returns the resumed
// world's chooser, and whether it took a checkpoint.
func resumeAndCompare(t *testing.T, what string, p checkpointAt, seq *fingerprintingSequence, res *simulator.Result, want runFingerprint) (*checkpointingChooser, bool) {
	t.Helper()
	c := &checkpointingChooser{inner: seq}
	cp := p.cp
	if forkProperties := len(seq.Choices)%2 == 0; !forkProperties {
		// Half the resumed worlds replay the history into fresh
		// monitors instead: both must give the original's verdicts.
		cp = cp.WithoutPropertyFork()
	}
	rw, err := cp.Resume(c)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	// Every shipped scenario's monitors can be forked.
	if replayed, want := rw.PropertyEventsReplayed(), 0; cp == p.cp && replayed != want {
		t.Fatalf("%s: the resumed world showed fresh monitors %d events, want %d: the checkpoint holds no fork of them", what, replayed, want)
	} else if cp != p.cp && replayed != p.cp.EventsAt() {
		t.Fatalf("%s: without the fork, the resumed world showed fresh monitors %d events, want the %d of its history", what, replayed, p.cp.EventsAt())
	}
	c.world = rw
	again, err := rw.Run()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if seq.Diverged {
		t.Fatalf("%s: the resumed world asked other decisions than the original", what)
	}
	if seq.hashed != p.hashed || seq.fingerprint != p.fingerprint {
		t.Fatalf("%s: fingerprint %x (%v), the original's %x (%v)", what, seq.fingerprint, seq.hashed, p.fingerprint, p.hashed)
	}
	compareFingerprints(t, what, want, fingerprint(t, again))
	if a, b := fmt.Sprint(res.Violations), fmt.Sprint(again.Violations); a != b {
		t.Fatalf("%s: violations differ:\n%s\n%s", what, a, b)
	}
	if again.Quiescent != res.Quiescent {
		t.Fatalf("%s: quiescent %v, the original %v", what, again.Quiescent, res.Quiescent)
	}
	// The original counts every reconcile it started; the resumed world
	// only those after the checkpoint.
	all, before := 0, 0
	for _, e := range res.History.Events {
		if e.Op == model.OpReconcile {
			all++
			if e.Step <= p.cp.EventsAt() {
				before++
			}
		}
	}
	if res.Reconciles != all || again.Reconciles != all-before {
		t.Fatalf("%s: the original counts %d reconciles and the resumed world %d; its history starts %d, %d of them before the checkpoint", what, res.Reconciles, again.Reconciles, all, before)
	}
	// The first checkpoint is at the decision resumed at: it shows
	// nothing new.
	return c, len(c.points) > 1
}

// fingerprintFirstChooser is checkpointingChooser with the fingerprint
// taken before the checkpoint, as the exhaustive search takes it (it
// claims the state, then checkpoints where items open): the checkpoint
// then knows the content hash of every object its world holds.
type fingerprintFirstChooser struct{ checkpointingChooser }

func (c *fingerprintFirstChooser) Choose(d model.Decision) int {
	if d.Kind == model.ChooseStep {
		h, hashed := d.Fingerprint()
		if cp, ok := c.world.Checkpoint(); ok {
			c.points = append(c.points, checkpointAt{cp: cp, decisions: c.decisions, fingerprint: h, hashed: hashed})
		}
	}
	c.decisions++
	return c.inner.Choose(d)
}

// TestResumedWorldsInheritContentHashes: a world resumed from a checkpoint
// fingerprints its first decision with the content hashes the checkpoint
// handed down, so it hashes fewer objects than a world resumed without
// them (and fingerprints the decision as the original did either way).
func TestResumedWorldsInheritContentHashes(t *testing.T) {
	for _, name := range []string{"zookeeper/fixed", "casskop/fixed"} {
		sc, err := targets.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c := &fingerprintFirstChooser{checkpointingChooser{inner: newRandomChooser(7)}}
		res := c.run(t, sc, c, simulator.RunOptions{})
		with, without := 0, 0
		for i, p := range c.points {
			if i%3 != 0 {
				continue
			}
			var computed [2]int
			for j, cp := range []*simulator.Checkpoint{p.cp, p.cp.WithoutHashes()} {
				seq := &fingerprintingSequence{Sequence: model.Sequence{Choices: res.Choices[p.decisions:]}}
				rw, err := cp.Resume(seq)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := rw.Run(); err != nil {
					t.Fatal(err)
				}
				if seq.fingerprint != p.fingerprint || seq.hashed != p.hashed {
					t.Fatalf("%s, decision %d: resumed (hashes handed down: %v), fingerprint %x, the original's %x", name, p.decisions, j == 0, seq.fingerprint, p.fingerprint)
				}
				computed[j] = rw.ContentHashesComputed()
			}
			if computed[0] > computed[1] {
				t.Fatalf("%s, decision %d: hashed %d objects with the checkpoint's hashes, %d without", name, p.decisions, computed[0], computed[1])
			}
			with += computed[0]
			without += computed[1]
		}
		t.Logf("%s: %d checkpoints, every 3rd resumed: %d objects hashed with the checkpoints' hashes, %d without", name, len(c.points), with, without)
		if without == 0 || with*4 > without {
			t.Errorf("%s: the resumed worlds hashed %d objects with their checkpoints' hashes and %d without: want at most a quarter", name, with, without)
		}
	}
}
