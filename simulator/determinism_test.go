package simulator_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// randomChooser answers every decision from a seeded generator: one seed,
// one schedule.
type randomChooser struct{ r *rand.Rand }

func newRandomChooser(seed uint64) *randomChooser {
	return &randomChooser{r: rand.New(rand.NewPCG(seed, 0x6f70636865636b))}
}

func (c *randomChooser) Choose(d model.Decision) int { return c.r.IntN(len(d.Options)) }

// runFingerprint is what must be byte-identical between two runs fed the
// same choices: the history lines and every event's object as JSON.
type runFingerprint struct {
	lines   string
	objects [][]byte
	choices string
	steps   int
}

func fingerprint(t testing.TB, res *simulator.Result) runFingerprint {
	t.Helper()
	fp := runFingerprint{lines: res.History.Lines(), choices: model.FormatChoices(res.Choices), steps: res.Steps}
	for i := range res.History.Events {
		e := &res.History.Events[i]
		if e.Object == nil {
			fp.objects = append(fp.objects, nil)
			continue
		}
		b, err := json.Marshal(e.Object)
		if err != nil {
			t.Fatalf("event %d: %v", e.Step, err)
		}
		fp.objects = append(fp.objects, b)
	}
	return fp
}

func compareFingerprints(t testing.TB, what string, a, b runFingerprint) {
	t.Helper()
	if a.lines != b.lines {
		t.Fatalf("%s: histories differ:\n--- first\n%s\n--- second\n%s", what, a.lines, b.lines)
	}
	if a.choices != b.choices {
		t.Fatalf("%s: choices differ", what)
	}
	if len(a.objects) != len(b.objects) {
		t.Fatalf("%s: %d vs %d events", what, len(a.objects), len(b.objects))
	}
	for i := range a.objects {
		if !bytes.Equal(a.objects[i], b.objects[i]) {
			t.Fatalf("%s: event %d's object differs:\n%s\n%s", what, i+1, a.objects[i], b.objects[i])
		}
	}
}

func TestDeterminismRandomSchedules(t *testing.T) {
	scenarios := []struct {
		name string
		new  func() *simulator.Scenario
		seed uint64
	}{
		{"zookeeper-buggy", func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Buggy) }, 1 << 32},
		{"casskop-buggy", func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) }, 2 << 32},
	}
	perScenario := 500
	if testing.Short() {
		perScenario = 50
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			// The two scenarios run side by side: worlds share nothing
			// but read-only schemes, so running them in parallel must not
			// change a byte either.
			t.Parallel()
			distinct := map[string]bool{}
			for i := 0; i < perScenario; i++ {
				seed := s.seed + uint64(i)
				var fps [2]runFingerprint
				for k := range fps {
					// KeepGoing: a violation must not cut one run shorter
					// than the other either.
					res, err := simulator.Run(s.new(), newRandomChooser(seed), simulator.RunOptions{KeepGoing: true})
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					fps[k] = fingerprint(t, res)
				}
				compareFingerprints(t, s.name+" seed "+itoa(seed), fps[0], fps[1])
				distinct[fps[0].lines] = true
			}
			// The seeds explore: not every schedule is the same one.
			if len(distinct) < perScenario/2 {
				t.Fatalf("only %d distinct histories out of %d random schedules", len(distinct), perScenario)
			}
		})
	}
}

// A recorded choice list replayed with model.Sequence gives the same
// history, and the replay does not diverge.
func TestDeterminismReplayRecordedChoices(t *testing.T) {
	for i, sc := range []func() *simulator.Scenario{
		func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Buggy) },
		func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) },
		webScenario,
	} {
		for seed := uint64(0); seed < 5; seed++ {
			res, err := simulator.Run(sc(), newRandomChooser(seed), simulator.RunOptions{KeepGoing: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Choices) == 0 {
				t.Fatalf("scenario %d seed %d: no choices recorded", i, seed)
			}
			// Round-trip the choices through their trace text too.
			parsed, err := model.ParseChoices(model.FormatChoices(res.Choices))
			if err != nil {
				t.Fatal(err)
			}
			seq := &model.Sequence{Choices: parsed}
			replay, err := simulator.Run(sc(), seq, simulator.RunOptions{KeepGoing: true})
			if err != nil {
				t.Fatal(err)
			}
			if seq.Diverged || seq.Consumed() != len(parsed) {
				t.Fatalf("scenario %d seed %d: replay diverged at %d (consumed %d of %d)", i, seed, seq.DivergedAt, seq.Consumed(), len(parsed))
			}
			compareFingerprints(t, "replay", fingerprint(t, res), fingerprint(t, replay))
		}
	}
}

func itoa(u uint64) string {
	b, _ := json.Marshal(u)
	return string(b)
}
