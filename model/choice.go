package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ChoiceKind says what a decision is about. It is recorded with every choice
// so a trace can be read, and so a replayed choice that lands on a different
// kind of decision is detected as divergence instead of silently reused.
type ChoiceKind uint8

const (
	// ChooseStep picks which enabled step runs next (actor, fault or clock):
	// the only decision the simulator asks. Which apiserver a restarted
	// controller talks to is part of the crash step chosen (Option.Server).
	ChooseStep ChoiceKind = iota + 1
)

var choiceKindNames = [...]string{ChooseStep: "step"}

func (k ChoiceKind) String() string {
	if int(k) < len(choiceKindNames) && choiceKindNames[k] != "" {
		return choiceKindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// ParseChoiceKind is the inverse of ChoiceKind.String.
func ParseChoiceKind(s string) (ChoiceKind, error) {
	for k, name := range choiceKindNames {
		if name != "" && name == s {
			return ChoiceKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown choice kind %q (want step)", s)
}

// Decision is one nondeterministic decision of a run, as data: what kind
// of decision it is, the options (the enabled steps, in the simulator's
// fixed order), what happened since the previous decision, and the state
// fingerprint of the world at this point. A chooser decides from these and
// its own state alone.
type Decision struct {
	Kind ChoiceKind
	// Options has at least one element.
	Options []Option
	// Since holds the events recorded since the previous decision (all of
	// them at the first): the writes, workload milestones and faults the
	// chooser may react to. Do not keep or modify it.
	Since []Event
	// Fingerprint returns the fingerprint of the world's state at this
	// decision (what decides its future), or false when it has none (a
	// reconcile is in flight, a property monitor keeps state it cannot
	// hash). It is computed on demand: asking costs a hash of the world.
	Fingerprint func() (uint64, bool)
}

// Option is one alternative of a decision: an enabled step.
type Option struct {
	Actor Actor
	Class StepClass
	// Fault is the fault the step injects (0 for none).
	Fault FaultKind
	// Kind is the resource type a stale or drop fault concerns.
	Kind string
	// Namespace and Name are the object an eviction deletes.
	Namespace, Name string
	// Server is the apiserver a crash restarts the controller on.
	Server int
	// Unobserved: a stale fault that no reader can observe before the
	// faults end. It pauses a watch cache of an apiserver no controller is
	// bound to and no client reads the caches of, and no crash is left in
	// the budget to restart a controller there; at the settle phase the
	// cache resumes, unread.
	Unobserved bool
	// StrandsPause: a crash, the last of the budget, after which a watch
	// cache that is paused and that nothing has read behind the store sits
	// on an apiserver no controller is bound to and no client reads the
	// caches of (the crash moves the controller bound there away, or
	// restarts a controller elsewhere when nobody was bound there). Nothing
	// read it before, and nothing can read it until the settle phase
	// resumes it: the pause changed nothing anyone saw.
	StrandsPause bool
	// Label names the step in traces, e.g. "deliver Pod".
	Label string
}

// Prune is the answer of a chooser that ends the run here without a
// verdict (an explorer that already explored this state). The run records
// no choice for it.
const Prune = -1

// Chooser makes every nondeterministic decision of a run: Choose returns
// the index of the option taken, in [0, len(d.Options)), or Prune. Random,
// PCT, exhaustive search, fuzzing and replay are all Choosers, and so is a
// strategy of a user's own.
type Chooser interface {
	Choose(d Decision) int
}

// Choice is one recorded decision: out of N alternatives of Kind, Value was
// taken.
type Choice struct {
	Kind  ChoiceKind
	N     int
	Value int
}

// String renders a choice as "step:3/7" (value 3 of 7 alternatives).
func (c Choice) String() string {
	return c.Kind.String() + ":" + strconv.Itoa(c.Value) + "/" + strconv.Itoa(c.N)
}

// ParseChoice is the inverse of Choice.String.
func ParseChoice(s string) (Choice, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Choice{}, fmt.Errorf("choice %q: want KIND:VALUE/N, e.g. step:3/7", s)
	}
	k, err := ParseChoiceKind(kind)
	if err != nil {
		return Choice{}, fmt.Errorf("choice %q: %w", s, err)
	}
	vs, ns, ok := strings.Cut(rest, "/")
	if !ok {
		return Choice{}, fmt.Errorf("choice %q: want KIND:VALUE/N, e.g. step:3/7", s)
	}
	v, err1 := strconv.Atoi(vs)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || v < 0 || v >= n {
		return Choice{}, fmt.Errorf("choice %q: VALUE and N must be integers with 0 <= VALUE < N", s)
	}
	return Choice{Kind: k, N: n, Value: v}, nil
}

// Recorder wraps a Chooser and records every decision it makes.
type Recorder struct {
	Inner   Chooser
	Choices []Choice
}

// Choose asks the inner chooser and records the answer (Prune is passed on
// and not recorded). An answer out of range is a bug of the inner chooser
// and panics.
func (r *Recorder) Choose(d Decision) int {
	n := len(d.Options)
	v := r.Inner.Choose(d)
	if v == Prune {
		return Prune
	}
	if v < 0 || v >= n {
		panic(fmt.Sprintf("model: chooser returned %d for %s with %d alternatives", v, d.Kind, n))
	}
	r.Choices = append(r.Choices, Choice{Kind: d.Kind, N: n, Value: v})
	return v
}

// Sequence replays a fixed list of values, then falls back to Then (or to
// value 0 when Then is nil). Values out of range are clamped into range with
// modulo so that an edited or fuzzed sequence is always a valid schedule.
// Diverged reports whether a recorded kind or arity did not match.
type Sequence struct {
	Choices  []Choice
	Then     Chooser
	pos      int
	Diverged bool
	// DivergedAt is the index of the first choice whose kind or N differed.
	DivergedAt int
}

// Choose implements Chooser.
func (s *Sequence) Choose(d Decision) int {
	kind, n := d.Kind, len(d.Options)
	if s.pos < len(s.Choices) {
		c := s.Choices[s.pos]
		if !s.Diverged && (c.Kind != kind || c.N != n) {
			s.Diverged = true
			s.DivergedAt = s.pos
		}
		s.pos++
		v := c.Value
		if v < 0 {
			v = -v
		}
		return v % n
	}
	if s.Then != nil {
		return s.Then.Choose(d)
	}
	return 0
}

// Consumed is how many recorded choices have been used.
func (s *Sequence) Consumed() int { return s.pos }

// Values is a Chooser that replays bare integers (a hand-written schedule or
// fuzzer bytes), modulo n, then 0.
type Values struct {
	Vals []int
	pos  int
}

// Choose implements Chooser.
func (v *Values) Choose(d Decision) int {
	n := len(d.Options)
	if v.pos >= len(v.Vals) {
		return 0
	}
	x := v.Vals[v.pos]
	v.pos++
	if x < 0 {
		x = -x
	}
	return x % n
}

// FormatChoices renders choices space-separated, as stored in trace files.
func FormatChoices(cs []Choice) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// ParseChoices is the inverse of FormatChoices.
func ParseChoices(s string) ([]Choice, error) {
	fields := strings.Fields(s)
	out := make([]Choice, 0, len(fields))
	for i, f := range fields {
		c, err := ParseChoice(f)
		if err != nil {
			return nil, fmt.Errorf("choice %d: %w", i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}
