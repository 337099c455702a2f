package simulator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/targets/kuberay"
)

// sharedReadChooser chooses at random and, at every step decision, checks
// that the reader Until conditions get (shallow copies of the stored
// revisions) answers exactly as World.Reader (deep copies): every
// workload condition of the scenario, and Gets and Lists of every kind
// the store holds, in every namespace, with and without selectors. At the
// end of the run (and along it, through memoCheckChooser's record) no
// stored object may have changed: what the shared reader hands out is
// the store's own data.
type sharedReadChooser struct {
	memoCheckChooser
	sc          *simulator.Scenario
	answers     map[bool]int // the conditions' answers seen
	reads       int          // objects compared
	sharedReads int          // objects compared through SharedGet and SharedList
}

// sharedGets are SharedGet of the kinds the shipped scenarios' conditions
// read, by pointer type.
var sharedGets = map[reflect.Type]func(context.Context, client.Reader, client.ObjectKey) (client.Object, error){
	reflect.TypeFor[*corev1.Pod]():         sharedGetAs[*corev1.Pod],
	reflect.TypeFor[*corev1.Service]():     sharedGetAs[*corev1.Service],
	reflect.TypeFor[*rayv1.RayCluster]():   sharedGetAs[*rayv1.RayCluster],
	reflect.TypeFor[*appsv1.StatefulSet](): sharedGetAs[*appsv1.StatefulSet],
}

func sharedGetAs[T client.Object](ctx context.Context, r client.Reader, key client.ObjectKey) (client.Object, error) {
	return simulator.SharedGet[T](ctx, r, key)
}

// withoutTypeMeta is a shallow copy of a stored object with apiVersion and
// kind cleared, as a typed read answers.
func withoutTypeMeta(obj runtime.Object) runtime.Object {
	v := reflect.New(reflect.TypeOf(obj).Elem())
	v.Elem().Set(reflect.ValueOf(obj).Elem())
	out := v.Interface().(runtime.Object)
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

func (c *sharedReadChooser) Choose(d model.Decision) int {
	if d.Kind == model.ChooseStep && c.w != nil && c.err == nil {
		if c.err = c.noteCommitted(); c.err == nil {
			c.err = c.compare()
		}
		if c.err == nil {
			c.err = c.checkCommitted()
		}
	}
	return c.r.IntN(len(d.Options))
}

func (c *sharedReadChooser) compare() error {
	ctx := context.Background()
	step := len(c.w.History.Events)
	shared, deep := c.w.SharedReader(), c.w.Reader()
	for i := range c.sc.Workload {
		ws := &c.sc.Workload[i]
		if ws.Until == nil {
			continue
		}
		got, want := ws.Until(ctx, shared), ws.Until(ctx, deep)
		if got != want {
			return fmt.Errorf("after event %d, the Until of %q is %v through the shared reader, %v through World.Reader", step, ws.Name, got, want)
		}
		c.answers[got]++
	}
	// Every kind the store ever held, through both readers.
	seen := map[schema.GroupVersionKind]bool{}
	var namespaces []string
	for _, ch := range c.w.Store.History() {
		seen[ch.Object.GetObjectKind().GroupVersionKind()] = true
		if ns := ch.Object.GetNamespace(); ns != "" && !strings.Contains(strings.Join(namespaces, ","), ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for gvk := range seen {
		for _, ns := range append([]string{"", "kube-system", "nowhere"}, namespaces...) {
			if err := c.compareKind(ctx, shared, deep, gvk, ns); err != nil {
				return fmt.Errorf("after event %d: %w", step, err)
			}
		}
	}
	return nil
}

// compareKind lists kind gvk in namespace ns through both readers (all,
// by the first object's labels, by a label no object has), and gets every
// object listed and one that does not exist.
func (c *sharedReadChooser) compareKind(ctx context.Context, shared, deep client.Reader, gvk schema.GroupVersionKind, ns string) error {
	newList := func() client.ObjectList {
		l, err := c.sc.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			panic(err)
		}
		return l.(client.ObjectList)
	}
	newObj := func() client.Object {
		o, err := c.sc.Scheme.New(gvk)
		if err != nil {
			panic(err)
		}
		return o.(client.Object)
	}
	list := func(opts ...client.ListOption) (client.ObjectList, error) {
		got, want := newList(), newList()
		gerr, werr := shared.List(ctx, got, opts...), deep.List(ctx, want, opts...)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("List %s %v: the shared reader gives\n%+v (%v)\nWorld.Reader\n%+v (%v)", gvk.Kind, opts, got, gerr, want, werr)
		}
		// SharedList: the stored revisions themselves, the same objects
		// as World.Reader's copies but for apiVersion and kind.
		ptrs, perr := simulator.SharedList[client.Object](ctx, shared, newList(), opts...)
		wantItems, _ := meta.ExtractList(want)
		if fmt.Sprint(perr) != fmt.Sprint(werr) || len(ptrs) != len(wantItems) {
			return nil, fmt.Errorf("SharedList %s %v: %d objects (%v), World.Reader %d (%v)", gvk.Kind, opts, len(ptrs), perr, len(wantItems), werr)
		}
		for i, p := range ptrs {
			if !reflect.DeepEqual(withoutTypeMeta(p), wantItems[i]) {
				return nil, fmt.Errorf("SharedList %s %v: item %d is\n%+v\nWorld.Reader's\n%+v", gvk.Kind, opts, i, p, wantItems[i])
			}
		}
		c.sharedReads += len(ptrs)
		return want, nil
	}
	all, err := list(client.InNamespace(ns))
	if err != nil {
		return err
	}
	objs, err := meta.ExtractList(all)
	if err != nil {
		return err
	}
	items := make([]client.Object, len(objs))
	for i, o := range objs {
		items[i] = o.(client.Object)
	}
	c.reads += len(items)
	if len(items) > 0 {
		sel := labels.SelectorFromSet(items[0].GetLabels())
		if _, err := list(client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return err
		}
	}
	if _, err := list(client.InNamespace(ns), client.MatchingLabels{"opcheck-test": "nobody"}); err != nil {
		return err
	}
	keys := []client.ObjectKey{{Namespace: ns, Name: "opcheck-missing"}}
	for _, o := range items {
		keys = append(keys, client.ObjectKeyFromObject(o))
	}
	for _, key := range keys {
		got, want := newObj(), newObj()
		gerr, werr := shared.Get(ctx, key, got), deep.Get(ctx, key, want)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || apierrors.ReasonForError(gerr) != apierrors.ReasonForError(werr) || !reflect.DeepEqual(got, want) {
			return fmt.Errorf("Get %s %s: the shared reader gives\n%+v (%v)\nWorld.Reader\n%+v (%v)", gvk.Kind, key, got, gerr, want, werr)
		}
		if get, ok := sharedGets[reflect.TypeOf(want)]; ok {
			p, perr := get(ctx, shared, key)
			if fmt.Sprint(perr) != fmt.Sprint(werr) || apierrors.ReasonForError(perr) != apierrors.ReasonForError(werr) || (werr == nil && !reflect.DeepEqual(withoutTypeMeta(p), want)) {
				return fmt.Errorf("SharedGet %s %s: \n%+v (%v)\nWorld.Reader\n%+v (%v)", gvk.Kind, key, p, perr, want, werr)
			}
			c.sharedReads++
		}
	}
	return nil
}

// TestSharedUntilReads: over every shipped scenario, with every fault, the
// reader Until conditions get answers as World.Reader does, and nothing
// writes into the stored objects it shares.
func TestSharedUntilReads(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	faults := model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 2, Drops: 1}
	answers, reads, sharedReads := map[bool]int{}, 0, 0
	for _, sc := range targets.All() {
		for seed := range uint64(seeds) {
			c := &sharedReadChooser{memoCheckChooser: memoCheckChooser{r: rand.New(rand.NewPCG(seed, 0x73686172))}, sc: sc, answers: answers}
			runChecked(t, sc, seed, c, &c.memoCheckChooser, faults)
			reads += c.reads
			sharedReads += c.sharedReads
		}
	}
	// The comparison is not vacuous: conditions both held and failed,
	// and objects were read.
	if answers[true] == 0 || answers[false] == 0 || reads < 1000 || sharedReads < 1000 {
		t.Fatalf("too little compared: condition answers %v, %d objects read, %d through SharedGet and SharedList", answers, reads, sharedReads)
	}
	t.Logf("condition answers %v, %d objects compared, %d through SharedGet and SharedList", answers, reads, sharedReads)
}

// TestSharedGetAndListNoteWhatGetAndListNote: a condition reading through
// SharedGet and SharedList is asked again on the same changes as one
// reading through Get and List: the memo notes the same kinds, in order.
func TestSharedGetAndListNoteWhatGetAndListNote(t *testing.T) {
	w, err := simulator.NewWorld(kuberay.Scenario(kuberay.Lifecycle), nil, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "default", Name: "raycluster"}
	shared, sharedBlind := w.UntilReads(func(r client.Reader) {
		_, _ = simulator.SharedGet[*rayv1.RayCluster](ctx, r, key)
		_, _ = simulator.SharedList[*corev1.Pod](ctx, r, &corev1.PodList{}, client.InNamespace("default"))
		_, _ = simulator.SharedList[*corev1.Service](ctx, r, &corev1.ServiceList{}, client.MatchingLabels{"a": "b"})
	})
	copied, copiedBlind := w.UntilReads(func(r client.Reader) {
		_ = r.Get(ctx, key, &rayv1.RayCluster{})
		_ = r.List(ctx, &corev1.PodList{}, client.InNamespace("default"))
		_ = r.List(ctx, &corev1.ServiceList{}, client.MatchingLabels{"a": "b"})
	})
	want := []string{"RayCluster", "Pod", "Service"}
	if !reflect.DeepEqual(shared, want) || !reflect.DeepEqual(copied, want) || sharedBlind || copiedBlind {
		t.Fatalf("noted through SharedGet/SharedList %v (lost track: %v), through Get/List %v (%v); want %v both", shared, sharedBlind, copied, copiedBlind, want)
	}
}
