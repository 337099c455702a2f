package simulator

import "github.com/opcheck/opcheck/model"

// memoKey names the state a memoized value was computed from: one store at
// one revision (or, for a value that reads only some kinds, at one sum of
// those kinds' table versions: tablesKey), and the logical time for values
// that also read the clock (zero for those that do not). Ground truth only
// changes with the store's revision, so a value computed from it stays
// right while the key does.
type memoKey struct {
	store *Store
	rev   model.Revision
	at    model.Time
}

// revisionKey is the key of a value computed from the store alone.
func revisionKey(s *Store) memoKey { return memoKey{store: s, rev: s.rev} }

// clockedKey is the key of a value computed from the store and the clock.
func clockedKey(s *Store, clock *model.Clock) memoKey {
	return memoKey{store: s, rev: s.rev, at: clock.Now()}
}

// revisionMemo holds one value computed at one memoKey: the enabled steps
// of a built-in actor or the eviction targets at the current revision, or
// the fact that a workload condition failed there. Every scheduling point
// asks for them, and most (reads, deliveries, ticks) change no store
// state, so the lookup turns a walk over the store into one comparison.
// The key holds the store, so a memo never matches another world's store.
type revisionMemo[T any] struct {
	key   memoKey
	valid bool
	value T
}

// get returns the value remembered at key, if any.
func (m *revisionMemo[T]) get(key memoKey) (T, bool) {
	if m.valid && m.key == key {
		return m.value, true
	}
	var zero T
	return zero, false
}

// set remembers v as the value at key.
func (m *revisionMemo[T]) set(key memoKey, v T) {
	m.key, m.valid, m.value = key, true, v
}

// last returns the value last set, valid or not: a memo of a slice
// reuses its storage for the next value.
func (m *revisionMemo[T]) last() T { return m.value }

// forget drops the value: the next get misses whatever the key.
func (m *revisionMemo[T]) forget() { m.valid = false }
