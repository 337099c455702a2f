package simulator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
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
	sc      *simulator.Scenario
	answers map[bool]int // the conditions' answers seen
	reads   int          // objects compared
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
	answers, reads := map[bool]int{}, 0
	for _, sc := range targets.All() {
		for seed := range uint64(seeds) {
			c := &sharedReadChooser{memoCheckChooser: memoCheckChooser{r: rand.New(rand.NewPCG(seed, 0x73686172))}, sc: sc, answers: answers}
			runChecked(t, sc, seed, c, &c.memoCheckChooser, faults)
			reads += c.reads
		}
	}
	// The comparison is not vacuous: conditions both held and failed,
	// and objects were read.
	if answers[true] == 0 || answers[false] == 0 || reads < 1000 {
		t.Fatalf("too little compared: condition answers %v, %d objects read", answers, reads)
	}
	t.Logf("condition answers %v, %d objects compared", answers, reads)
}
