package model

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// formatTime is Time.String as it was before AppendTo: the slow path
// TestTimeAppendToIsString holds String and AppendTo to.
func formatTime(t Time) string {
	s := strconv.FormatInt(int64(t)/1000, 10)
	if ms := int64(t) % 1000; ms != 0 {
		frac := strconv.FormatInt(1000+ms, 10)[1:]
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	return s + "s"
}

// TestTimeAppendToIsString checks String and AppendTo against the former
// rendering on the edge cases and on random times, and that AppendTo
// keeps what b held.
func TestTimeAppendToIsString(t *testing.T) {
	times := []Time{0, 1, 9, 10, 100, 999, 1000, 1001, 1010, 1100, 1500, 30500, 59999, 60000, 1<<62 + 7, -1, -1000}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		times = append(times, Time(r.Int64N(1<<40)))
	}
	for _, tm := range times {
		want := formatTime(tm)
		if got := tm.String(); got != want {
			t.Fatalf("Time(%d).String() = %q, want %q", int64(tm), got, want)
		}
		if got := string(tm.AppendTo([]byte("tick to "))); got != "tick to "+want {
			t.Fatalf("Time(%d).AppendTo(\"tick to \") = %q, want %q", int64(tm), got, "tick to "+want)
		}
	}
}
