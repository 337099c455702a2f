package simulator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/kuberay"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// builtinActors are fresh built-in actors, in the world's order.
func builtinActors() []simulator.Actor {
	return []simulator.Actor{simulator.NewStatefulSetController(), simulator.NewScheduler(), simulator.NewKubelet(), simulator.NewPVCProtection(), simulator.NewGarbageCollector(), simulator.NewNamespaceController()}
}

// stepsLine renders steps as data, one per line.
func stepsLine(steps []simulator.Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "%s %s %q\n", s.Actor, s.Class, s.Label)
	}
	return b.String()
}

// memoCheckChooser chooses at random and, at every step decision, checks
// that built-in actors kept across the whole run (whose steps are
// remembered per version of the tables they read, or per store revision)
// offer exactly the steps fresh actors compute from the store, and that
// PeekList (a list kept per table version) is the store's list; and that
// no stored object changes after its commit.
type memoCheckChooser struct {
	r       *rand.Rand
	w       *simulator.World
	kept    []simulator.Actor
	checked int
	offered map[string]int // decisions at which each kind of actor offered steps
	err     error          // the first difference (Choose may run off the test's goroutine)
	// committed is every stored object's JSON when first seen: the built-in
	// actors share the stored objects' fields in their requests, and
	// nothing may ever write into a stored object.
	committed [][]byte
}

// noteCommitted records the JSON of the objects committed since the last
// call.
func (c *memoCheckChooser) noteCommitted() error {
	for _, ch := range c.w.Store.History()[len(c.committed):] {
		b, err := json.Marshal(ch.Object)
		if err != nil {
			return err
		}
		c.committed = append(c.committed, b)
	}
	return nil
}

// checkCommitted reports a stored object that changed since it was first
// seen.
func (c *memoCheckChooser) checkCommitted() error {
	for i, ch := range c.w.Store.History()[:len(c.committed)] {
		b, err := json.Marshal(ch.Object)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, c.committed[i]) {
			return fmt.Errorf("the object stored at revision %d changed after its commit:\n%s\nnow\n%s", ch.Rev, c.committed[i], b)
		}
	}
	return nil
}

// runChecked runs sc with chooser ch, whose embedded memoCheckChooser
// (base) checks along the run, and fails the test on the first difference
// it found or on a stored object that changed by the end.
func runChecked(t *testing.T, sc *simulator.Scenario, seed uint64, ch model.Chooser, base *memoCheckChooser, faults model.FaultBudget) {
	t.Helper()
	w, err := simulator.NewWorld(sc, ch, simulator.RunOptions{Faults: &faults, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	base.w = w
	if _, err := w.Run(); err != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
	}
	if base.err == nil {
		base.err = base.checkCommitted()
	}
	if base.err != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, base.err)
	}
}

func (c *memoCheckChooser) Choose(d model.Decision) int {
	if d.Kind == model.ChooseStep && c.w != nil && c.err == nil {
		c.err = c.check(d)
	}
	return c.r.IntN(len(d.Options))
}

func (c *memoCheckChooser) check(d model.Decision) error {
	step := len(c.w.History.Events)
	if err := c.noteCommitted(); err != nil {
		return err
	}
	for i, fresh := range builtinActors() {
		want := stepsLine(fresh.Steps(c.w, nil))
		if want != "" {
			c.offered[fmt.Sprintf("%T", fresh)]++
		}
		// Twice: the second answer comes from the memo when the first
		// filled it.
		for range 2 {
			if got := stepsLine(c.kept[i].Steps(c.w, nil)); got != want {
				return fmt.Errorf("after event %d, %T kept across the run offers\n%s\na fresh one offers\n%s", step, fresh, got, want)
			}
		}
		if kf, ok := fresh.(simulator.Timed); ok {
			a, aok := kf.NextTimer()
			b, bok := c.kept[i].(simulator.Timed).NextTimer()
			if aok != bok || (aok && a != b) {
				return fmt.Errorf("after event %d, the kept %T's next timer is %v %v, a fresh one's %v %v", step, fresh, b, bok, a, aok)
			}
		}
	}
	for _, ns := range []string{"", "default", "kube-system", "defaul"} {
		var pods corev1.PodList
		if err := c.w.Reader().List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		var want, got []string
		for i := range pods.Items {
			want = append(want, pods.Items[i].Namespace+"/"+pods.Items[i].Name+"@"+pods.Items[i].ResourceVersion)
		}
		for _, o := range c.w.PeekList(&corev1.Pod{}, ns) {
			got = append(got, o.GetNamespace()+"/"+o.GetName()+"@"+o.GetResourceVersion())
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("after event %d, PeekList(pods, %q) = %v, the store lists %v", step, ns, got, want)
		}
	}
	// The eviction faults offered (kept per version of the pods' table)
	// are the running pods not being deleted.
	var offered, running []string
	for _, o := range d.Options {
		if o.Fault == model.FaultEvict {
			offered = append(offered, o.Label)
		}
	}
	for _, o := range c.w.PeekList(&corev1.Pod{}, "") {
		if p := o.(*corev1.Pod); p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running = append(running, "evict pod "+p.Namespace+"/"+p.Name)
		}
	}
	if len(offered) > 0 && !slices.Equal(offered, running) {
		return fmt.Errorf("after event %d, the evictions offered are %v, the running pods %v", step, offered, running)
	}
	c.checked++
	return nil
}

func TestBuiltinStepMemosMatchFreshSteps(t *testing.T) {
	scenarios := []func() *simulator.Scenario{
		func() *simulator.Scenario { return zookeeper.Scenario(zookeeper.Fixed) },
		func() *simulator.Scenario { return casskop.Scenario(casskop.Buggy) },
		func() *simulator.Scenario { return kuberay.Scenario(kuberay.Lifecycle) },
		func() *simulator.Scenario { return kuberay.Scenario(kuberay.Scale) },
	}
	// The garbage collector's first steps come with kuberay/lifecycle's
	// deletions, at seed 4 and later.
	seeds := 20
	if testing.Short() {
		seeds = 8
	}
	offered, checked := map[string]int{}, 0
	// Every fault the scenarios can take, so that crashes, evictions
	// (pods deleted under the StatefulSet controller) and paused caches
	// happen.
	faults := model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 2, Drops: 1}
	for _, newScenario := range scenarios {
		for seed := range uint64(seeds) {
			sc := newScenario()
			c := &memoCheckChooser{r: rand.New(rand.NewPCG(seed, 0x6d656d6f)), kept: builtinActors(), offered: offered}
			runChecked(t, sc, seed, c, c, faults)
			checked += c.checked
		}
	}
	// The check ran, and on steps of every actor but the namespace
	// controller (no scenario deletes a namespace; see
	// TestNamespaceLifecycle for its memo).
	if checked < 50*seeds {
		t.Fatalf("only %d decisions checked", checked)
	}
	for _, a := range builtinActors()[:5] {
		if name := fmt.Sprintf("%T", a); offered[name] == 0 {
			t.Fatalf("%s never offered a step: %v", name, offered)
		}
	}
	t.Logf("%d decisions checked; decisions with steps, per actor: %v", checked, offered)
}
