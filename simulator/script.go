package simulator

import (
	"fmt"
	"strings"

	"github.com/opcheck/opcheck/model"
)

// ScriptStep is one directed decision of a ScriptChooser: once a history
// line containing After has been recorded (since the previous script step
// fired; "" means at once), the first enabled step whose label contains
// Label is chosen.
type ScriptStep struct {
	After string
	Label string
}

// ScriptChooser is a hand-written schedule in readable form: it fires its
// script steps in order and otherwise makes fair progress (ordinary steps in
// rotation; never a fault or the settle decision unless scripted). Its
// recorded choices are an ordinary choice sequence: replaying them with
// model.Sequence gives the same history. Set World before the run starts
// (NewWorld, then assign, then World.Run).
type ScriptChooser struct {
	World  *World
	Script []ScriptStep
	pos    int
	seen   int  // history events already searched for the current After
	armed  bool // the current step's After has been seen
	turn   int
}

// Done reports whether every script step fired.
func (s *ScriptChooser) Done() bool { return s.pos >= len(s.Script) }

// Choose implements model.Chooser.
func (s *ScriptChooser) Choose(d model.Decision) int {
	if d.Kind != model.ChooseStep || s.World == nil {
		return 0
	}
	steps := d.Options
	if s.pos < len(s.Script) && s.ready() {
		want := s.Script[s.pos].Label
		for i := range steps {
			if strings.Contains(steps[i].Label, want) {
				s.pos++
				s.seen = len(s.World.History.Events)
				s.armed = false
				return i
			}
		}
	}
	var fair []int
	for i := range steps {
		if steps[i].Actor != model.ActorFault {
			fair = append(fair, i)
		}
	}
	if len(fair) == 0 {
		// Only faults and the settle decision are left: settle rather
		// than inject a fault nobody scripted.
		for i := range steps {
			if steps[i].Class == model.StepSettle {
				return i
			}
		}
		return 0
	}
	s.turn++
	return fair[s.turn%len(fair)]
}

func (s *ScriptChooser) ready() bool {
	after := s.Script[s.pos].After
	if after == "" || s.armed {
		return true
	}
	ev := s.World.History.Events
	for ; s.seen < len(ev); s.seen++ {
		if strings.Contains(ev[s.seen].Line(), after) {
			s.armed = true
			return true
		}
	}
	return false
}

// RunScript runs one schedule of sc under a ScriptChooser with script: the
// hand-written schedules of tests and bug reports. It fails, with the
// history, if the script did not run to its end (a label never became
// enabled after its After line).
func RunScript(sc *Scenario, script []ScriptStep, opts RunOptions) (*Result, error) {
	ch := &ScriptChooser{Script: script}
	w, err := NewWorld(sc, ch, opts)
	if err != nil {
		return nil, err
	}
	ch.World = w
	res, err := w.Run()
	if err != nil {
		return res, err
	}
	if !ch.Done() {
		return res, fmt.Errorf("the script of %s stopped at step %d of %d (%q after %q never became enabled); history:\n%s", sc.Name, ch.pos+1, len(script), script[ch.pos].Label, script[ch.pos].After, res.History.Lines())
	}
	return res, nil
}
