package properties

import (
	"encoding/binary"
	"hash"
)

// StateHasher is implemented by monitors that can fingerprint the part of
// their state that can change a future verdict. The exhaustive explorer
// merges two schedules that reach the same world state only when their
// monitors' fingerprints agree too: a monitor whose state differs (a
// NoStuckReconcile streak two failures long against one that was broken by
// a change) can report in one future and not in the other.
//
// HashState writes that state into h. State that only changes a
// violation's explanation (the step of an earlier stale read) may be left
// out: the merged schedule reports the same property at the same kind of
// event, explained from its own history.
type StateHasher interface {
	HashState(h hash.Hash64)
}

// Fingerprinted returns m with a state fingerprint: hash writes the state of
// m that can change a future verdict. A nil hash declares that m has none:
// its verdicts depend only on the State and the event it is shown. A
// monitor without a fingerprint (Observer, MonitorFuncs and user types that
// do not implement StateHasher) is assumed to keep state nobody can see, and
// turns state pruning off while it is not yet violated.
func Fingerprinted(m Monitor, hash func(h hash.Hash64)) Monitor {
	return fingerprinted{Monitor: m, hash: hash}
}

type fingerprinted struct {
	Monitor
	hash func(h hash.Hash64)
}

func (f fingerprinted) HashState(h hash.Hash64) {
	if f.hash != nil {
		f.hash(h)
	}
}

// HashState writes the state of the run's monitors that can change a
// future verdict into h: which properties are violated already and each
// live monitor's fingerprint. It returns false when a live monitor has no
// fingerprint (see StateHasher): its state is unknown, so two schedules
// must not be merged. Ground truth is not hashed here; it is the store,
// which the caller hashes.
func (r *Run) HashState(h hash.Hash64) bool {
	var buf [8]byte
	for i, m := range r.monitors {
		if r.found[i] != nil {
			h.Write([]byte{1})
			continue
		}
		s, ok := m.(StateHasher)
		if !ok {
			return false
		}
		h.Write([]byte{0})
		s.HashState(h)
		binary.LittleEndian.PutUint64(buf[:], uint64(i))
		h.Write(buf[:])
	}
	return true
}

// hashBool and hashString are the building blocks of the generic monitors'
// fingerprints.
func hashBool(h hash.Hash64, b bool) {
	if b {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
}

func hashString(h hash.Hash64, s string) {
	h.Write([]byte(s))
	h.Write([]byte{0})
}

func hashInt(h hash.Hash64, v int) {
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(v))
	h.Write(buf[:])
}
