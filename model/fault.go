package model

import (
	"fmt"
	"strconv"
	"strings"
)

// FaultKind names one of the faults opcheck injects.
type FaultKind uint8

const (
	// FaultCrash crashes a controller at its current API call and restarts
	// it against a chosen apiserver (intermediate state).
	FaultCrash FaultKind = iota + 1
	// FaultStale pauses one apiserver's watch cache for one resource type
	// (stale state, time travel after a restart).
	FaultStale
	// FaultDrop drops a watch event before a controller's informer sees it
	// (unobserved state).
	FaultDrop
	// FaultEvict deletes a pod from outside (node drain, eviction).
	FaultEvict
	// FaultExpire expires a controller's watch with 410 Gone: its informer
	// relists (healing what a drop lost, and re-notifying every change
	// since its last event).
	FaultExpire
)

var faultNames = [...]string{FaultCrash: "crash", FaultStale: "stale", FaultDrop: "drop", FaultEvict: "evict", FaultExpire: "expire"}

func (f FaultKind) String() string {
	if int(f) < len(faultNames) && faultNames[f] != "" {
		return faultNames[f]
	}
	return "fault" + strconv.Itoa(int(f))
}

// FaultBudget bounds how many faults of each kind one schedule may inject.
type FaultBudget struct {
	Crashes   int
	Stale     int
	Drops     int
	Evictions int
	Expiries  int
}

// Of returns the budget for one fault kind.
func (b FaultBudget) Of(f FaultKind) int {
	switch f {
	case FaultCrash:
		return b.Crashes
	case FaultStale:
		return b.Stale
	case FaultDrop:
		return b.Drops
	case FaultEvict:
		return b.Evictions
	case FaultExpire:
		return b.Expiries
	}
	return 0
}

// Spend returns the budget with one fault of kind f used.
func (b FaultBudget) Spend(f FaultKind) FaultBudget {
	switch f {
	case FaultCrash:
		b.Crashes--
	case FaultStale:
		b.Stale--
	case FaultDrop:
		b.Drops--
	case FaultEvict:
		b.Evictions--
	case FaultExpire:
		b.Expiries--
	}
	return b
}

// Total is the number of faults left.
func (b FaultBudget) Total() int { return b.Crashes + b.Stale + b.Drops + b.Evictions + b.Expiries }

// String renders the budget as "crashes=1 stale=1 drops=0 evictions=1",
// with " expiries=N" appended when N > 0 (so budgets without watch
// expiries render as before).
func (b FaultBudget) String() string {
	s := fmt.Sprintf("crashes=%d stale=%d drops=%d evictions=%d", b.Crashes, b.Stale, b.Drops, b.Evictions)
	if b.Expiries > 0 {
		s += fmt.Sprintf(" expiries=%d", b.Expiries)
	}
	return s
}

// ParseFaultBudget is the inverse of FaultBudget.String.
func ParseFaultBudget(s string) (FaultBudget, error) {
	var b FaultBudget
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return b, fmt.Errorf("fault budget %q: want NAME=N with N >= 0, e.g. crashes=1", f)
		}
		switch k {
		case "crashes":
			b.Crashes = n
		case "stale":
			b.Stale = n
		case "drops":
			b.Drops = n
		case "evictions":
			b.Evictions = n
		case "expiries":
			b.Expiries = n
		default:
			return b, fmt.Errorf("fault budget %q: unknown fault %q (want crashes, stale, drops, evictions or expiries)", f, k)
		}
	}
	return b, nil
}
