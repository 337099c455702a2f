package properties

import (
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

// TestApplyHoldsWhatEachChangeLeft applies random adds, modifications and
// deletions (cluster-scoped and namespaced, names past the key buffer's
// 64 bytes included) and checks, after every event, that Get answers
// every kind, namespace and name with exactly the object the latest
// change of that ObjectKey left (the same pointer), and that Len counts
// them: a map built with ObjectKey is the reference.
func TestApplyHoldsWhatEachChangeLeft(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 42))
	kinds := []string{"ConfigMap", "Namespace"}
	namespaces := []string{"", "a", "default", strings.Repeat("n", 60)}
	names := []string{"x", "y", "p-0", strings.Repeat("m", 70)}
	s := NewState()
	ref := map[string]map[string]runtime.Object{}
	for _, k := range kinds {
		ref[k] = map[string]runtime.Object{}
	}
	for i := 1; i <= 3000; i++ {
		kind, ns, name := kinds[r.IntN(len(kinds))], namespaces[r.IntN(len(namespaces))], names[r.IntN(len(names))]
		key := ObjectKey(ns, name)
		e := model.Event{Step: i, Rev: model.Revision(i), Kind: kind, Namespace: ns, Name: name}
		_, held := ref[kind][key]
		switch {
		case held && r.IntN(3) == 0:
			e.Change = model.ChangeDeleted
			delete(ref[kind], key)
		default:
			e.Change = model.ChangeModified
			if !held || r.IntN(4) == 0 {
				e.Change = model.ChangeAdded
			}
			obj := &corev1.ConfigMap{}
			obj.Name, obj.Namespace = name, ns
			e.Object = obj
			ref[kind][key] = obj
		}
		s.Apply(&e)
		n := 0
		for _, k := range kinds {
			n += len(ref[k])
			for _, ns := range namespaces {
				for _, name := range names {
					got, ok := s.Get(k, ns, name)
					want, wantOK := ref[k][ObjectKey(ns, name)]
					if ok != wantOK || got != want {
						t.Fatalf("event %d (%s %s %q %q): Get(%s, %q, %q) = %p %v, want %p %v", i, e.Change, kind, ns, name, k, ns, name, got, ok, want, wantOK)
					}
				}
			}
		}
		if s.Len() != n {
			t.Fatalf("event %d: Len() = %d, want %d", i, s.Len(), n)
		}
	}
}
