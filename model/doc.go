// Package model is the vocabulary every other opcheck package speaks: the
// choice stream (Decision, Option, Chooser, ChoiceKind, Choice), the history (Event, Op, Actor),
// store revisions, fault kinds and the logical clock.
//
// What it models: a run of a simulated cluster as a sequence of events, each
// one step of one actor, and every nondeterministic decision behind that run
// as one recorded integer choice. Two runs fed the same choices produce the
// same events, byte for byte; that is the contract every other package keeps.
//
// What it does not model: anything that moves. The store, apiservers and
// controllers live in package simulator; this package holds types and pure
// functions only, and imports nothing of opcheck's.
package model
