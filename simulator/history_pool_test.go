package simulator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/opcheck/opcheck/model"
)

// TestReleaseClearsTheArrayItRecycles checks Result.Release: it empties
// the result, and the array a later run gets back holds no event of the
// released run (no object kept alive, nothing to read by mistake).
func TestReleaseClearsTheArrayItRecycles(t *testing.T) {
	reused := 0
	for range 20 {
		events := recycledHistory(600)
		for i := range 700 { // past the capacity asked for, as a long run grows it
			events = append(events, model.Event{Step: i + 1, Actor: "someone", Op: model.OpUpdate, Object: &corev1.Pod{}, Versions: []model.Version{{Name: "a", Rev: 1}}})
		}
		grown := cap(events)
		h := &model.History{Events: events}
		r := &Result{History: h, World: &World{}, Choices: make([]model.Choice, 3, 8)}
		r.Release()
		if r.History != nil || r.World != nil || h.Events != nil || r.Choices != nil {
			t.Fatalf("after Release: result history %v, world %v, history events %d, choices %v: want all nil, so a late reader fails loudly", r.History, r.World, len(h.Events), r.Choices)
		}
		if c := recycledChoices(); len(c) != 0 {
			t.Fatalf("recycledChoices gave %d choices, want none", len(c))
		}
		again := recycledHistory(600)
		if len(again) != 0 || cap(again) < 600 {
			t.Fatalf("recycledHistory(600) gave length %d, capacity %d: want an empty array of capacity 600 or more", len(again), cap(again))
		}
		if cap(again) == grown {
			reused++
		}
		for i, e := range again[:cap(again)] {
			if e.Step != 0 || e.Object != nil || e.Versions != nil || e.Actor != "" {
				t.Fatalf("recycled array, slot %d: %+v, want the zero event", i, e)
			}
		}
	}
	// sync.Pool may drop what it holds (at a GC, at random under the race
	// detector), so reuse is not promised every time; but it is the point.
	if reused == 0 {
		t.Errorf("no released array was reused in 20 rounds")
	}
	t.Logf("reused %d of 20", reused)
}
