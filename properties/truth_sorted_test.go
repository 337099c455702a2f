package properties

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
)

// A State keeps each kind's sorted keys until an object of the kind is
// added or removed. Through random creates, updates and deletes of two
// kinds in several namespaces, every List of the state followed online
// (listing after every event, so the kept keys are used and dropped over
// and over) is the List of a state replayed afresh to that event.
func TestStateListFollowsAddsAndRemoves(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 14))
	var b builder
	online := NewState()
	live := map[string]bool{}
	sel := labels.SelectorFromSet(labels.Set{"app": "zk"})
	for i := 0; i < 600; i++ {
		name := "p" + strconv.Itoa(r.IntN(12))
		namespace := []string{"default", "a", "a-b", "ab"}[r.IntN(4)]
		kind := []string{"PersistentVolumeClaim", "ConfigMap"}[r.IntN(2)]
		var obj interface{ SetNamespace(string) }
		key := kind + " " + namespace + "/" + name
		lbl := map[string]string{"app": []string{"zk", "other"}[r.IntN(2)]}
		if kind == "ConfigMap" {
			c := cr(name, r.IntN(3))
			c.Labels = lbl
			obj = c
		} else {
			obj = pvc(name, lbl)
		}
		obj.SetNamespace(namespace)
		switch {
		case !live[key]:
			b.create(model.ActorUser, kind, obj.(runtime.Object))
			live[key] = true
		case r.IntN(3) == 0:
			b.remove(model.ActorUser, kind, obj.(runtime.Object))
			live[key] = false
		default:
			b.update(model.ActorUser, kind, obj.(runtime.Object))
		}
		online.Apply(&b.h.Events[len(b.h.Events)-1])
		fresh := Replay(&b.h, -1)
		for _, k := range []string{"PersistentVolumeClaim", "ConfigMap"} {
			for _, n := range []string{"", "default", "a", "ab"} {
				for _, s := range []labels.Selector{nil, sel} {
					got, want := keysOf(online.list(k, n, s)), keysOf(fresh.list(k, n, s))
					if !slices.Equal(got, want) {
						t.Fatalf("event %d: List(%s, %q, %v) = %v, replayed afresh %v", i+1, k, n, s, got, want)
					}
					// The typed List builds its []T on its own path.
					var typed []string
					if k == "ConfigMap" {
						typed = keysOf(asObjects(List[*corev1.ConfigMap](online, n, s)))
					} else {
						typed = keysOf(asObjects(List[*corev1.PersistentVolumeClaim](online, n, s)))
					}
					if !slices.Equal(typed, want) {
						t.Fatalf("event %d: the typed List(%s, %q, %v) = %v, replayed afresh %v", i+1, k, n, s, typed, want)
					}
				}
			}
		}
	}
	if online.Len() == 0 || len(online.sorted) == 0 {
		t.Fatalf("nothing left to list (%d objects) or no sorted keys kept", online.Len())
	}
}

func keysOf(objs []runtime.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolumeClaim:
			out[i] = o.Namespace + "/" + o.Name + "@" + o.ResourceVersion
		case *corev1.ConfigMap:
			out[i] = o.Namespace + "/" + o.Name + "@" + o.ResourceVersion
		}
	}
	return out
}

func asObjects[T runtime.Object](objs []T) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}
