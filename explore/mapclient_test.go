package explore

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/targets"
)

// TestMapClientServesTheReplays keeps BenchmarkExplore's harness-free side
// honest on every shipped scenario: every object a recorded schedule
// stores has a typed copier (else the map client copies twice and the
// overhead ratio looks better than it is), the replayed reconciles do
// not panic (a call the map client does not serve would end them early,
// with the same effect), and the events they record go to the map side's
// recorder, not into a simulated world's history.
func TestMapClientServesTheReplays(t *testing.T) {
	for _, sc := range targets.All() {
		t.Run(sc.Name, func(t *testing.T) {
			for _, s := range recordSchedules(t, sc, 1) {
				for _, r := range s.reconciles {
					for kind, objs := range r.objects {
						for _, o := range objs {
							if _, ok := mapCopiers[reflect.TypeOf(o)]; !ok {
								t.Fatalf("the map client has no typed copier for %T (kind %s): register it in mapCopiers", o, kind)
							}
						}
					}
				}
				events := 0
				for _, e := range s.world.History.Events {
					if e.Op == model.OpRecordEvent {
						events++
					}
				}
				formatted := messageSink
				s.check(t)
				if events > 0 && messageSink == formatted {
					t.Fatalf("the schedule recorded %d Kubernetes events under the harness, and its replay formatted none: the replayed reconciler's recorder is not the map side's (one that records in a simulated world is harness work on the reconciler's side)", events)
				}
			}
		})
	}
}

// TestMapClientCopies: what the map client hands out and what it stores
// are copies, and Lists filter and sort as an apiserver does.
func TestMapClientCopies(t *testing.T) {
	ctx := context.Background()
	c := &mapClient{scheme: runtime.NewScheme(), objs: kindObjects{}}
	if err := clientgoscheme.AddToScheme(c.scheme); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b", "a", "c"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "x"}}}
		if name == "c" {
			pod.Labels["app"] = "y"
		}
		if err := c.Create(ctx, pod, nil...); err != nil {
			t.Fatal(err)
		}
		pod.Labels["app"] = "mutated by the caller after Create"
	}
	var got corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["app"] != "x" || got.ResourceVersion == "" {
		t.Fatalf("Get a = labels %v rv %q; want app=x and a resourceVersion", got.Labels, got.ResourceVersion)
	}
	got.Labels["app"] = "mutated by the caller after Get"
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace("ns"), client.MatchingLabels{"app": "x"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name+"="+p.Labels["app"])
	}
	if want := []string{"a=x", "b=x"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("List app=x = %v, want %v", names, want)
	}
	list.Items[0].Labels["app"] = "mutated by the caller after List"
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &got); err != nil || got.Labels["app"] != "x" {
		t.Fatalf("after the callers' mutations, Get a = labels %v (err %v), want app=x", got.Labels, err)
	}
}
