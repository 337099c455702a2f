package model

import (
	"strconv"
	"time"
)

// Time is logical time in milliseconds since the start of a run. Nothing in
// opcheck reads the wall clock; timestamps on objects are Epoch plus Time.
type Time int64

// Epoch is the wall-clock instant logical time 0 maps to, fixed so that
// object timestamps are identical across runs and machines.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Wall returns the wall-clock instant this logical time stands for.
func (t Time) Wall() time.Time { return Epoch.Add(time.Duration(t) * time.Millisecond) }

// String renders the time as seconds with millisecond precision, e.g. "30.5s".
func (t Time) String() string {
	var buf [24]byte
	return string(t.AppendTo(buf[:0]))
}

// AppendTo appends what String renders to b: a label built around a time
// (the scheduler's "tick to 30.5s") costs one allocation, not three.
func (t Time) AppendTo(b []byte) []byte {
	b = strconv.AppendInt(b, int64(t)/1000, 10)
	if ms := int64(t) % 1000; ms != 0 {
		var digits [8]byte
		frac := strconv.AppendInt(digits[:0], 1000+ms, 10)[1:]
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		b = append(b, '.')
		b = append(b, frac...)
	}
	return append(b, 's')
}

// FromDuration converts a duration to logical time, rounding down to a
// millisecond.
func FromDuration(d time.Duration) Time { return Time(d / time.Millisecond) }

// Clock is the logical clock of a run. It only moves when told to.
type Clock struct {
	now Time
}

// Now returns the current logical time.
func (c *Clock) Now() Time { return c.now }

// Wall returns the current logical time as a wall-clock instant.
func (c *Clock) Wall() time.Time { return c.now.Wall() }

// AdvanceTo moves the clock forward to t; it never moves backwards.
func (c *Clock) AdvanceTo(t Time) {
	if t > c.now {
		c.now = t
	}
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d Time) {
	if d > 0 {
		c.now += d
	}
}
