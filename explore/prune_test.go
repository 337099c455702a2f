package explore

import (
	"context"
	"fmt"
	"hash"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// violationSet runs the exhaustive search with opts (its faults, workers,
// pruning and reduction) to the end of its bounds (keepGoing) and returns
// every violation it met, each as the property and the ground truth the
// violating schedule ended in, with the result.
func violationSet(t *testing.T, sc *simulator.Scenario, opts Options) (map[string]bool, Report) {
	t.Helper()
	set := map[string]bool{}
	opts.Visit = func(_ int, _ uint64, res *simulator.Result) {
		for _, v := range res.Violations {
			set[fmt.Sprintf("%s @ store %016x", v.Property, res.World.StoreHash())] = true
		}
	}
	return set, searchToTheEnd(t, sc, opts)
}

// searchToTheEnd runs the exhaustive search with opts (Visit set by the
// caller) to the end of its bounds, failing the test on an error or an
// incomplete search.
func searchToTheEnd(t *testing.T, sc *simulator.Scenario, opts Options) Report {
	t.Helper()
	opts.Strategy, opts.keepGoing = StrategyExhaustive, true
	r := Explore(sc, opts)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if !r.Complete {
		t.Fatalf("%s: the search did not complete in %d schedules", sc.Name, r.Schedules)
	}
	return r
}

// comparePruning runs sc with and without state pruning and reports how
// the violations differ ("" when they are the same). workers 0 means
// GOMAXPROCS: the shared visited table must be as sound as one worker's.
func comparePruning(t *testing.T, sc *simulator.Scenario, faults *model.FaultBudget, workers int) (diff string, pruned, full Report) {
	t.Helper()
	with, pruned := violationSet(t, sc, Options{Faults: faults, Workers: workers})
	without, full := violationSet(t, sc, Options{Faults: faults, Workers: workers, NoPrune: true})
	if (pruned.Violation == nil) != (full.Violation == nil) {
		return fmt.Sprintf("verdicts differ: pruned violation %v, unpruned %v", pruned.Violation, full.Violation), pruned, full
	}
	if !maps.Equal(with, without) {
		return fmt.Sprintf("pruned search met %d violations %v, the unpruned one %d %v", len(with), slices.Sorted(maps.Keys(with)), len(without), slices.Sorted(maps.Keys(without))), pruned, full
	}
	return "", pruned, full
}

// The shipped scenarios, under budgets that make the searches merge
// hundreds of states: pruning changes neither the verdict nor any violation
// met. A state fingerprint that leaves out part of what decides the future
// shows here as a violation the pruned search never meets.
func TestPruningKeepsEveryViolation(t *testing.T) {
	cases := []struct {
		name   string
		faults *model.FaultBudget
		long   bool
	}{
		{"casskop/buggy", &model.FaultBudget{Crashes: 2}, false},
		{"casskop/upstream-fix", &model.FaultBudget{Crashes: 1, Stale: 1}, false},
		{"casskop/fixed", &model.FaultBudget{Crashes: 2}, false},
		{"zookeeper/buggy", &model.FaultBudget{Crashes: 1, Stale: 1}, true},
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		diff, pruned, full := comparePruning(t, lookup(t, c.name), c.faults, 0)
		if diff != "" {
			t.Errorf("%s with %s: %s", c.name, c.faults, diff)
		}
		// The comparison shows something only where the pruned search
		// merged states. A merged schedule is cut short but still counted,
		// so the schedule counts may be equal (zookeeper/buggy since
		// one-event delivery: 1,023 and 1,023, 26 of them cut short).
		if pruned.Pruned == 0 {
			t.Errorf("%s with %s: pruning merged no state (%d schedules against %d): the comparison shows nothing", c.name, c.faults, pruned.Schedules, full.Schedules)
		}
		t.Logf("%s with %s: %d schedules (%d pruned) against %d, violation %v", c.name, c.faults, pruned.Schedules, pruned.Pruned, full.Schedules, pruned.Violation != nil)
	}
}

// A paused watch cache that something may still read (here apiserver-2's
// ZookeeperCluster cache, read after a crash restarts the controller
// there) holds back a backlog of events that its informers receive one by
// one once it resumes. Two paths that paused it at the same revision and
// reached the same head through different writes (a status write more)
// deliver different numbers of events in the settle phase and interleave
// the reconciles between them differently. zookeeper/buggy with two
// crashes and two stale caches, the stranding crashes offered (so that
// such paths are explored and merge): before the fingerprint carried the
// backlog (World.hashBacklog) the pruned search met 34 of the unpruned
// search's 35 violating final states; it missed a NoDeleteOfLive store
// that only the longer backlog's interleaving reaches. Mutation tried:
// leaving the backlog out of the fingerprint fails this test. Both
// searches leave ticks out of the crash rule (ignoreTicks): with
// them, the pair ran for more than ten minutes without finishing.
func TestPruningKeepsPausedCacheBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("searches zookeeper/buggy with crashes=2 stale=2 twice, once unpruned (about a minute)")
	}
	faults := model.FaultBudget{Crashes: 2, Stale: 2}
	sc := lookup(t, "zookeeper/buggy")
	with, pruned := violationSet(t, sc, Options{Faults: &faults, Schedules: 2000000, offerStranding: true, ignoreTicks: true})
	without, full := violationSet(t, sc, Options{Faults: &faults, Schedules: 2000000, offerStranding: true, ignoreTicks: true, NoPrune: true})
	if !maps.Equal(with, without) {
		var missed []string
		for k := range without {
			if !with[k] {
				missed = append(missed, k)
			}
		}
		slices.Sort(missed)
		t.Errorf("the pruned search met %d violating final states, the unpruned one %d; missed: %v", len(with), len(without), missed)
	}
	t.Logf("%d violating final states; %d schedules (%d pruned) against %d", len(with), pruned.Schedules, pruned.Pruned, full.Schedules)
}

// crashBeforeSecond is a made-up safety property whose verdict hangs on
// monitor state alone: it is violated at Settle when a crash struck before
// the workload's second step was done. The world does not remember when
// the crash struck; only the monitor does. hidden drops its fingerprint
// (declares it stateless), as a monitor that forgot to hash its state would.
func crashBeforeSecond(hidden bool) properties.Property {
	return properties.Property{Name: "NoCrashBeforeSecond", Kind: properties.Safety, NewMonitor: func() properties.Monitor {
		early, second := false, false
		m := properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
			switch {
			case e.Op == model.OpWorkload && e.Detail == "done: second":
				second = true
			case e.Op == model.OpCrash && !second:
				early = true
			case e.Op == model.OpSettle && early:
				return &properties.Violation{Step: e.Step, Event: *e, Explanation: "a crash struck before the second workload step was done"}
			}
			return nil
		})
		if hidden {
			return properties.Fingerprinted(m, nil)
		}
		return properties.Fingerprinted(m, func(h hash.Hash64) {
			h.Write([]byte{byte(boolInt(early)), byte(boolInt(second))})
		})
	}}
}

// idleScenario: a controller of ConfigMaps that sees none, and a user who
// creates five Secrets. A crash after any of the first three Secrets leads
// to the same world (the controller restarts idle, after as many steps),
// which the search merges when the fourth Secret is created (the last one
// ends the faults): a crash after the second and one after the third are
// rightly merged; a crash after the first is told apart only by
// crashBeforeSecond's state.
func idleScenario(p properties.Property) *simulator.Scenario {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	secret := func(name string) simulator.WorkloadStep {
		return simulator.WorkloadStep{Name: name, Do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
		}}
	}
	return &simulator.Scenario{
		Name:       "idle",
		Scheme:     scheme,
		NoBuiltins: true,
		Controllers: []simulator.ControllerSpec{{
			Name: "idle", For: &corev1.ConfigMap{},
			New: func(client.Client) reconcile.Reconciler {
				return reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
			},
		}},
		Workload:   []simulator.WorkloadStep{secret("first"), secret("second"), secret("third"), secret("fourth"), secret("fifth")},
		Faults:     model.FaultBudget{Crashes: 1},
		Properties: []properties.Property{p},
	}
}

// Where the verdict hangs on monitor state, the fingerprint must carry it:
// with it, pruning merges states and still finds the violation; without it
// (the monitor hides its state), the pruned search merges the violating
// schedule into an innocent one and says verified, and the comparison
// catches that. One worker: the merges happen in the depth-first order
// described (more workers may reach the states in another order).
func TestPruningKeepsMonitorState(t *testing.T) {
	diff, pruned, full := comparePruning(t, idleScenario(crashBeforeSecond(false)), nil, 1)
	if diff != "" {
		t.Fatalf("with the monitor's fingerprint: %s", diff)
	}
	if full.Violation == nil || pruned.Violation == nil {
		t.Fatalf("no violation found (pruned %v, unpruned %v): the scenario does not exercise the property", pruned.Violation, full.Violation)
	}
	if pruned.Pruned == 0 {
		t.Fatalf("nothing was pruned in %d schedules: the scenario does not merge states", pruned.Schedules)
	}
	diff, hidden, _ := comparePruning(t, idleScenario(crashBeforeSecond(true)), nil, 1)
	if diff == "" || hidden.Violation != nil {
		t.Fatalf("with the monitor's state hidden, the pruned search still found the violation (%v): the scenario does not show what the fingerprint is for", hidden.Violation)
	}
	// A monitor without any fingerprint turns pruning off: sound, slower.
	noPrint := crashBeforeSecond(false)
	inner := noPrint.NewMonitor
	noPrint.NewMonitor = func() properties.Monitor { return struct{ properties.Monitor }{inner()} }
	r := Explore(idleScenario(noPrint), Options{Strategy: StrategyExhaustive, Workers: 1, keepGoing: true})
	if r.Violation == nil || r.Pruned != 0 {
		t.Fatalf("a monitor without a fingerprint: violation %v, %d pruned; want the violation and nothing pruned", r.Violation, r.Pruned)
	}
}

// quiesces is violated by a run that hits its step bound without reaching
// Quiescent: the property a step bound's effect shows in.
func quiesces() properties.Property {
	return properties.Property{Name: "Quiesces", Kind: properties.Liveness, NewMonitor: func() properties.Monitor {
		return properties.Fingerprinted(properties.MonitorFuncs(nil, func(s *properties.State, h *model.History) *properties.Violation {
			for i := range h.Events {
				if h.Events[i].Op == model.OpQuiescent {
					return nil
				}
			}
			last := h.Events[len(h.Events)-1]
			return &properties.Violation{Step: last.Step, Event: last, Explanation: "the run hit its step bound"}
		}), func(hash.Hash64) {})
	}}
}

// depthScenario: a controller that mirrors each Secret into a ConfigMap
// of the same name, and a user who creates three Secrets and deletes them
// again, each time waiting for the mirror to follow. A crash restarts the
// controller, which reconciles every Secret it lists (reads only, the
// mirrors being there already), so crashes at different moments reach the
// same state at different depths. maxSteps is the scenario's step bound.
func depthScenario(maxSteps int) *simulator.Scenario {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "default", Name: name} }
	mirrored := func(name string, want bool) func(ctx context.Context, r client.Reader) bool {
		return func(ctx context.Context, r client.Reader) bool {
			err := r.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{})
			return (err == nil) == want
		}
	}
	var steps []simulator.WorkloadStep
	for _, n := range []string{"a", "b", "c"} {
		steps = append(steps, simulator.WorkloadStep{Name: "create " + n, Until: mirrored(n, true), Do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.Secret{ObjectMeta: meta(n)})
		}})
	}
	for _, n := range []string{"a", "b", "c"} {
		steps = append(steps, simulator.WorkloadStep{Name: "delete " + n, Until: mirrored(n, false), Do: func(ctx context.Context, c client.Client) error {
			return c.Delete(ctx, &corev1.Secret{ObjectMeta: meta(n)})
		}})
	}
	return &simulator.Scenario{
		Name:       "depth",
		Scheme:     scheme,
		NoBuiltins: true,
		MaxSteps:   maxSteps,
		Controllers: []simulator.ControllerSpec{{
			Name: "mirror", For: &corev1.Secret{}, Owns: []client.Object{&corev1.ConfigMap{}},
			New: func(c client.Client) reconcile.Reconciler {
				return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					err := c.Get(ctx, req.NamespacedName, &corev1.Secret{})
					if apierrors.IsNotFound(err) {
						return reconcile.Result{}, client.IgnoreNotFound(c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: meta(req.Name)}))
					}
					if err != nil {
						return reconcile.Result{}, err
					}
					if err := c.Get(ctx, req.NamespacedName, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
						return reconcile.Result{}, err
					}
					return reconcile.Result{}, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(req.Name)})
				})
			},
		}},
		Workload:   steps,
		Faults:     model.FaultBudget{Crashes: 1},
		Properties: []properties.Property{quiesces()},
	}
}

// States are fingerprinted without the step count, so pruning merges a
// state reached at different depths. That keeps every future while the
// step bound cuts none of them; depthScenario with a bound of 35 steps is
// a case where it cuts one (the schedule that crashes after the first
// Secret and runs 35 steps is merged into one that reached the same state
// two steps deeper and ran 37, past the bound, after the bound reported
// the merged-into run). The search then explores the level again with
// exact merging, and meets every violation the unpruned search meets;
// trusting the merge (trustDepth) loses one, which shows the case is one
// where depth matters. With the default bound the merges stand.
func TestPruningAcrossDepths(t *testing.T) {
	for _, bound := range []int{34, 35} {
		sc := func() *simulator.Scenario { return depthScenario(bound) }
		full, _ := violationSet(t, sc(), Options{Workers: 1, NoPrune: true})
		checked, r := violationSet(t, sc(), Options{Workers: 1})
		trusted, _ := violationSet(t, sc(), Options{Workers: 1, trustDepth: true})
		if !maps.Equal(full, checked) {
			t.Errorf("bound %d: the pruned search met %v, the unpruned one %v", bound, slices.Sorted(maps.Keys(checked)), slices.Sorted(maps.Keys(full)))
		}
		if r.Reexplored == 0 {
			t.Errorf("bound %d: the level was not explored again (%d schedules, %d pruned)", bound, r.Schedules, r.Pruned)
		}
		if maps.Equal(full, trusted) {
			t.Errorf("bound %d: trusting merges across depths lost nothing (%v): the case does not show what the check is for", bound, slices.Sorted(maps.Keys(full)))
		}
	}
	diff, pruned, full := comparePruning(t, depthScenario(0), nil, 1)
	if diff != "" {
		t.Fatal(diff)
	}
	if pruned.Reexplored != 0 || pruned.Pruned == 0 || pruned.Steps >= full.Steps {
		t.Fatalf("default bound: %d pruned, %d re-explored levels, %d steps against %d unpruned: want merges that stand", pruned.Pruned, pruned.Reexplored, pruned.Steps, full.Steps)
	}
}

// flipScenario: two controllers that disagree on a ConfigMap's data and
// each write their value whenever they see the other's, so the world goes
// round a cycle of states until the step bound ends the run.
func flipScenario() *simulator.Scenario {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	writer := func(value string) func(c client.Client) reconcile.Reconciler {
		return func(c client.Client) reconcile.Reconciler {
			return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var cm corev1.ConfigMap
				if err := c.Get(ctx, req.NamespacedName, &cm); err != nil || cm.Data["v"] == value {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				patch := client.MergeFrom(cm.DeepCopy())
				cm.Data = map[string]string{"v": value}
				return reconcile.Result{}, c.Patch(ctx, &cm, patch)
			})
		}
	}
	return &simulator.Scenario{
		Name:       "flip",
		Scheme:     scheme,
		NoBuiltins: true,
		Controllers: []simulator.ControllerSpec{
			{Name: "one", For: &corev1.ConfigMap{}, New: writer("1")},
			{Name: "two", For: &corev1.ConfigMap{}, New: writer("2")},
		},
		Workload: []simulator.WorkloadStep{{Name: "create", Do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}})
		}}},
		// A fault left to inject keeps the fault phase, and its decisions,
		// going while the controllers loop.
		Faults:     model.FaultBudget{Crashes: 1},
		Properties: []properties.Property{quiesces()},
	}
}

// A path that comes back to a state it passed through is not pruned there:
// the state's futures are this path's own, not explored yet. Merging it
// would cut the fault-free livelock at its second lap (the report would
// then be a later schedule, or none).
func TestPruningDoesNotCutACycle(t *testing.T) {
	r := Explore(flipScenario(), Options{Workers: 1})
	if r.Verdict != VerdictViolation || r.Violation.Property != "Quiesces" {
		t.Fatalf("verdict %s %v after %d schedules (%d pruned): want the livelock reported as Quiesces", r.Verdict, r.Violation, r.Schedules, r.Pruned)
	}
	if r.Index != 0 || r.Pruned != 0 {
		t.Fatalf("the livelock reported is schedule %d (%d pruned): the first, fault-free schedule was cut short", r.Index, r.Pruned)
	}
}

// memoryScenario: a controller of Secrets that remembers, in memory only,
// the first Secret its incarnation reconciled and mirrors each Secret into
// a ConfigMap; ten seconds in, on a requeue of s1, it writes that memory
// into the ConfigMap "final". The user creates s3, s2 and s1, each waiting
// for its mirror. A crash before s2 exists restarts the controller with s3
// alone to remember; one after s1 exists restarts it on all three, and the
// relist hands it s1 first. Both reach the same world when the faults end
// (the same objects, s1's requeue due in ten seconds, a crash spent),
// remembering s3 and s1. firstAfterCrash flags the first. keepsMemory sets
// ControllerSpec.KeepsMemory.
func memoryScenario(keepsMemory bool) *simulator.Scenario {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "default", Name: name} }
	create := func(secret string) simulator.WorkloadStep {
		return simulator.WorkloadStep{Name: "create " + secret, Do: func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &corev1.Secret{ObjectMeta: meta(secret)})
		}, Until: func(ctx context.Context, r client.Reader) bool {
			return r.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mirror-" + secret}, &corev1.ConfigMap{}) == nil
		}}
	}
	later := model.FromDuration(10 * time.Second)
	return &simulator.Scenario{
		Name:       "memory",
		Scheme:     scheme,
		NoBuiltins: true,
		Controllers: []simulator.ControllerSpec{{
			Name: "remember", For: &corev1.Secret{}, KeepsMemory: keepsMemory,
			NewWithEnv: func(env *simulator.Env) reconcile.Reconciler {
				c := env.Client
				first := "" // the memory: kept from one reconcile to the next
				ensure := func(ctx context.Context, name string) error {
					if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
						return err
					}
					cm := &corev1.ConfigMap{ObjectMeta: meta(name)}
					if name == "final" {
						cm.Data = map[string]string{"first": first}
					}
					return c.Create(ctx, cm)
				}
				return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					if err := c.Get(ctx, req.NamespacedName, &corev1.Secret{}); err != nil {
						return reconcile.Result{}, client.IgnoreNotFound(err)
					}
					if first == "" {
						first = req.Name
					}
					now := env.World.Clock.Now()
					if req.Name == "s1" && now >= later {
						return reconcile.Result{}, ensure(ctx, "final")
					}
					if err := ensure(ctx, "mirror-"+req.Name); err != nil || req.Name != "s1" {
						return reconcile.Result{}, err
					}
					return reconcile.Result{RequeueAfter: time.Duration(later-now) * time.Millisecond}, nil
				})
			},
		}},
		Workload:               []simulator.WorkloadStep{create("s3"), create("s2"), create("s1"), create("t-last")},
		Faults:                 model.FaultBudget{Crashes: 1},
		OpaqueResourceVersions: true,
		Properties:             []properties.Property{firstAfterCrash()},
	}
}

// firstAfterCrash is violated when, after a crash, the controller writes
// the ConfigMap "final" remembering s3: what only a controller restarted
// before s2 existed remembers.
func firstAfterCrash() properties.Property {
	return properties.Property{Name: "NoS3AfterCrash", Kind: properties.Safety, NewMonitor: func() properties.Monitor {
		crashed := false
		m := properties.Observer(func(s *properties.State, e *model.Event) *properties.Violation {
			switch {
			case e.Op == model.OpCrash:
				crashed = true
			case crashed && e.Op == model.OpCreate && e.Name == "final":
				if cm, ok := e.Object.(*corev1.ConfigMap); ok && cm.Data["first"] == "s3" {
					return &properties.Violation{Step: e.Step, Event: *e, Explanation: "after a crash the controller remembered s3"}
				}
			}
			return nil
		})
		return properties.Fingerprinted(m, func(h hash.Hash64) { h.Write([]byte{byte(boolInt(crashed))}) })
	}}
}

// A controller that keeps memory between reconciles (KubeRay's scale
// expectations) remembers what the world does not show. Two paths that
// reach the same world remembering different things have different
// futures: without ControllerSpec.KeepsMemory the search merges them and
// the pruned search misses the violation only the path it cut reaches;
// with it, the memory's digest is in the fingerprint and the paths stay
// apart. Where the controllers were told the same things (idleScenario's
// controller is told nothing), the digest does not stop merges. One
// worker: the merges happen in the depth-first order described.
func TestPruningKeepsReconcilerMemory(t *testing.T) {
	diff, pruned, full := comparePruning(t, memoryScenario(true), nil, 1)
	if diff != "" {
		t.Fatalf("with KeepsMemory: %s", diff)
	}
	if full.Violation == nil || pruned.Violation == nil {
		t.Fatalf("no violation found (pruned %v, unpruned %v): the scenario does not exercise the memory", pruned.Violation, full.Violation)
	}
	diff, forgot, _ := comparePruning(t, memoryScenario(false), nil, 1)
	if diff == "" {
		t.Fatalf("without KeepsMemory the pruned search met every violation (%d schedules, %d pruned): the scenario does not show what the digest is for", forgot.Schedules, forgot.Pruned)
	}
	t.Logf("without KeepsMemory: %s", diff)
	idle := idleScenario(crashBeforeSecond(false))
	idle.Controllers[0].KeepsMemory = true
	diff, merged, _ := comparePruning(t, idle, nil, 1)
	if diff != "" {
		t.Fatalf("idle controller with KeepsMemory: %s", diff)
	}
	if merged.Pruned == 0 {
		t.Fatalf("idle controller with KeepsMemory: nothing was pruned in %d schedules: the digest stopped merges of controllers told the same things", merged.Schedules)
	}
}

// mergingDefaults takes the default option everywhere and, like the
// exhaustive search's chooser, merges states (simulator.SettleMerger).
type mergingDefaults struct{}

func (mergingDefaults) Choose(model.Decision) int                    { return 0 }
func (mergingDefaults) SettleStarts(int, func() (uint64, bool)) bool { return true }

// A world keeps the digest of a controller's memory only for a chooser
// that merges states (the only one that asks for fingerprints); any other
// world with such a controller has no fingerprint at all, so nothing can
// merge its states without the digest. The state a run ended in is still
// counted (EndStateHash: the sampling strategies count distinct ends).
func TestStateHashNeedsTheMemoryDigest(t *testing.T) {
	for _, merges := range []bool{false, true} {
		var chooser model.Chooser = &model.Sequence{}
		if merges {
			chooser = mergingDefaults{}
		}
		w, err := simulator.NewWorld(memoryScenario(true), chooser, simulator.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := w.Run()
		if err != nil {
			t.Fatal(err)
		}
		if !r.Quiescent {
			t.Fatalf("merges=%v: the run did not end quiescent", merges)
		}
		if _, ok := w.StateHash(); ok != merges {
			t.Errorf("merges=%v: StateHash answered ok=%v", merges, ok)
		}
		// The end of a run is counted among the outcomes either way.
		if _, ok := w.EndStateHash(); !ok {
			t.Errorf("merges=%v: EndStateHash answered ok=false", merges)
		}
	}
}
