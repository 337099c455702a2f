package properties_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// TestForkedRunGoesOnAsTheOriginal checks Run.Fork over the histories of
// random schedules of every shipped scenario, with every fault and run on
// past violations: a run forked at a step, fed the rest of the history
// after the original was fed it first (so that anything the two shared
// would have moved), reports exactly what a fresh run fed the whole
// history reports from that step on (violations with their explanations
// and related steps, and Finish's), and fingerprints every later state as
// it does. NoStuckReconcile(1) and a never-true convergence add streaks
// and fault explanations to the monitors' state.
func TestForkedRunGoesOnAsTheOriginal(t *testing.T) {
	never := properties.EventuallyConverges("NeverConverges", func(*properties.State) (bool, string) { return false, "never" })
	seeds := uint64(4)
	if testing.Short() {
		seeds = 2
	}
	faults := model.FaultBudget{Crashes: 2, Stale: 1, Evictions: 1, Drops: 1}
	forks, violations := 0, 0
	for _, sc := range targets.All() {
		props := append([]properties.Property{never, properties.NoStuckReconcile(1), properties.NoStuckReconcile(2)}, sc.Properties...)
		for seed := range seeds {
			res, err := simulator.Run(sc, randomChooser{rand.New(rand.NewPCG(seed, 0x666f726b))}, simulator.RunOptions{Faults: &faults, KeepGoing: true})
			if err != nil {
				t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
			}
			// Forks at a grid of events, and right after every
			// reconcile's start and every failed reconcile: where a
			// reconcile is in flight (which a crash explains) and where
			// a streak of failures is under way.
			var points []int
			for i, e := range res.History.Events {
				if i%(1+len(res.History.Events)/12) == 0 || e.Op == model.OpReconcile || e.Op == model.OpReconcileDone && e.Err != "" {
					points = append(points, i+1)
				}
			}
			f, v := checkForks(t, fmt.Sprintf("%s seed %d", sc.Name, seed), sc.Scheme, res.History, props, points)
			forks, violations = forks+f, violations+v
		}
	}
	if violations < 20 {
		t.Fatalf("only %d violations compared over %d forks: the histories exercise too little", violations, forks)
	}
	t.Logf("%d forks, %d violations compared", forks, violations)
}

// checkForks forks a run of props at each of points (a number of events
// of h observed) and checks that the original, fed the rest of h first,
// and then the fork report from there on what a fresh run fed all of h
// reports, and fingerprint every later state alike; a second fork, fed a
// crash no history has before the original finishes, must not change the
// original's verdicts. It returns the forks
// and the violations compared.
func checkForks(t *testing.T, what string, scheme *runtime.Scheme, h *model.History, props []properties.Property, points []int) (forks, violations int) {
	t.Helper()
	fresh := newRun(scheme, props)
	want := make([][]properties.Violation, len(h.Events))
	wantHash := make([]uint64, len(h.Events))
	for i := range h.Events {
		want[i] = fresh.Observe(&h.Events[i])
		wantHash[i] = runHash(fresh)
	}
	wantEnd := fresh.Finish(h)
	for _, at := range points {
		orig := newRun(scheme, props)
		for i := range h.Events[:at] {
			orig.Observe(&h.Events[i])
		}
		fork, ok := orig.Fork()
		probe, _ := orig.Fork()
		if !ok {
			t.Fatalf("%s: the run cannot be forked", what)
		}
		for _, r := range []*properties.Run{orig, fork} {
			for i := at; i < len(h.Events); i++ {
				got := r.Observe(&h.Events[i])
				if !reflect.DeepEqual(got, want[i]) {
					t.Fatalf("%s, forked after %d events (fork: %v): event %d (%s) gives %v, a fresh run %v", what, at, r == fork, i, h.Events[i].Line(), got, want[i])
				}
				if hh := runHash(r); hh != wantHash[i] {
					t.Fatalf("%s, forked after %d events (fork: %v): fingerprint after event %d %x, a fresh run's %x", what, at, r == fork, i, hh, wantHash[i])
				}
				violations += len(got)
			}
			if r == orig {
				// A fork fed other events must not show in the
				// original's state (a fault log sharing an array).
				probe.Observe(&probeCrash)
			}
			if got := r.Finish(h); !reflect.DeepEqual(got, wantEnd) {
				t.Fatalf("%s, forked after %d events (fork: %v): Finish gives %v, a fresh run %v", what, at, r == fork, got, wantEnd)
			}
			violations += len(wantEnd)
		}
		forks++
	}
	return forks, violations
}

// probeCrash is a fault event of no history, shown to a fork to see that
// the original does not see it.
var probeCrash = model.Event{Step: 1 << 30, Actor: model.ActorFault, Op: model.OpCrash, Name: "controller/probe"}

// TestForkedRunGoesOnAsTheOriginalMidStreak is the same check on a
// history made to fork where the random ones rarely do: inside a reconcile
// a crash later explains (the fault log's reconcile in flight), and inside
// a streak of failures after CaughtUp that NoStuckReconcile(3) reports.
func TestForkedRunGoesOnAsTheOriginalMidStreak(t *testing.T) {
	x := model.ControllerActor("x")
	evs := []model.Event{
		{Actor: x, Op: model.OpReconcile, Kind: "ConfigMap", Namespace: "default", Name: "a"},
		{Actor: x, Op: model.OpGet, Kind: "ConfigMap", Namespace: "default", Name: "a"},
		{Actor: x, Op: model.OpGet, Kind: "ConfigMap", Namespace: "default", Name: "b"},
		{Actor: model.ActorFault, Op: model.OpCrash, Name: string(x)},
		{Actor: model.ActorFault, Op: model.OpSettle},
		{Actor: model.ActorFault, Op: model.OpCaughtUp},
	}
	for range 3 {
		evs = append(evs,
			model.Event{Actor: x, Op: model.OpReconcile, Kind: "ConfigMap", Namespace: "default", Name: "a"},
			model.Event{Actor: x, Op: model.OpReconcileDone, Kind: "ConfigMap", Namespace: "default", Name: "a", Err: "Conflict: busy"})
	}
	h := &model.History{}
	for i, e := range evs {
		e.Step = i + 1
		e.Time = model.Time(i * 1000)
		h.Events = append(h.Events, e)
	}
	never := properties.EventuallyConverges("NeverConverges", func(*properties.State) (bool, string) { return false, "never" })
	props := []properties.Property{never, properties.NoStuckReconcile(3)}
	points := make([]int, len(h.Events)+1)
	for i := range points {
		points[i] = i
	}
	_, violations := checkForks(t, "made-up history", nil, h, props, points)
	got := properties.Check(h, props...)
	if len(got) != 2 || !strings.Contains(got[0].Explanation, "after API call 2") || got[1].Step != len(h.Events) {
		t.Fatalf("the made-up history should explain a crash after API call 2 and be stuck at its last step; got %v", got)
	}
	t.Logf("%d violations compared", violations)
}

func newRun(scheme *runtime.Scheme, props []properties.Property) *properties.Run {
	r := properties.NewRun(props...)
	if scheme != nil {
		r.State().UseScheme(scheme)
	}
	return r
}

func runHash(r *properties.Run) uint64 {
	h := fnv.New64a()
	if !r.HashState(h) {
		return 0
	}
	return h.Sum64()
}

// TestForkRefusesMonitorsWithoutFork: a run with a live monitor that does
// not implement Forker (Observer's closures) cannot be forked; once that
// property is violated, its monitor is never consulted again and the run
// forks.
func TestForkRefusesMonitorsWithoutFork(t *testing.T) {
	p := properties.Property{Name: "FirstEventIllegal", NewMonitor: func() properties.Monitor {
		return properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
			return &properties.Violation{Step: e.Step, Event: *e, Explanation: "every event is"}
		})
	}}
	r := properties.NewRun(p, properties.NoReconcilePanic())
	if _, ok := r.Fork(); ok {
		t.Fatal("a run with an Observer monitor forked")
	}
	r.Observe(&model.Event{Step: 1, Actor: model.ActorUser, Op: model.OpWorkload})
	f, ok := r.Fork()
	if !ok {
		t.Fatal("a run whose only monitor without Fork is violated did not fork")
	}
	if got := f.Violations(); len(got) != 1 || got[0].Property != "FirstEventIllegal" {
		t.Fatalf("the fork's violations %v, want the original's FirstEventIllegal", got)
	}
}

// TestLinearizableForks: Linearizable judges the whole history at Finish
// and keeps nothing while shown events, so its run forks, and a fork
// finishes with the original's verdict: the stale reads of random
// zookeeper/buggy schedules with a stale cache, found alike by the
// original, a fork taken at the start, in the middle and at the end, and a
// fresh run.
func TestLinearizableForks(t *testing.T) {
	sc, err := targets.Lookup("zookeeper/buggy")
	if err != nil {
		t.Fatal(err)
	}
	props := []properties.Property{properties.Linearizable("Linearizable(controllers)", properties.IsController)}
	faults := model.FaultBudget{Stale: 1}
	illegal := 0
	for seed := range uint64(8) {
		res, err := simulator.Run(sc, randomChooser{rand.New(rand.NewPCG(seed, 0x6c696e))}, simulator.RunOptions{Faults: &faults})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		n := len(res.History.Events)
		_, v := checkForks(t, fmt.Sprintf("zookeeper/buggy seed %d", seed), sc.Scheme, res.History, props, []int{0, n / 2, n})
		if v > 0 {
			illegal++
		}
	}
	if illegal == 0 {
		t.Fatal("no schedule read stale: the forks' verdicts were never compared with a violation")
	}
	t.Logf("%d of 8 schedules not linearizable", illegal)
}
