package properties

import (
	"testing"

	"github.com/opcheck/opcheck/model"
)

// TestRequestKeyIsRequestKey checks requestKeyIs (and Event.KeyIs under
// it) against building the keys, over every event of a small alphabet and
// every key those events build, plus each key cut short and lengthened
// by one byte.
func TestRequestKeyIsRequestKey(t *testing.T) {
	parts := []string{"", "a", "ns", "a/b", "a b"}
	var events []model.Event
	for _, kind := range []string{"", "Pod", "a"} {
		for _, ns := range parts {
			for _, name := range parts {
				events = append(events, model.Event{Kind: kind, Namespace: ns, Name: name})
			}
		}
	}
	candidates := map[string]bool{}
	for i := range events {
		for _, k := range []string{requestKey(&events[i]), events[i].Key()} {
			candidates[k] = true
			candidates[k+"x"] = true
			candidates[k+"/"] = true
			if k != "" {
				candidates[k[:len(k)-1]] = true
				candidates[k[1:]] = true
			}
		}
	}
	checked, equal := 0, 0
	for i := range events {
		e := &events[i]
		for s := range candidates {
			if got, want := requestKeyIs(s, e), requestKey(e) == s; got != want {
				t.Fatalf("requestKeyIs(%q, %+v) = %v, want %v (requestKey is %q)", s, *e, got, want, requestKey(e))
			}
			if got, want := e.KeyIs(s), e.Key() == s; got != want {
				t.Fatalf("KeyIs(%q) of %+v = %v, want %v (Key is %q)", s, *e, got, want, e.Key())
			}
			checked++
			if requestKey(e) == s {
				equal++
			}
		}
	}
	if equal < len(events) {
		t.Fatalf("only %d of %d comparisons were of equal keys", equal, checked)
	}
}
