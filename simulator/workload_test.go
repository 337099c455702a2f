package simulator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

func cmScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

const holdFinalizer = "example.com/hold"

// releaser removes holdFinalizer from a terminating ConfigMap 2s (logical)
// after it first sees it terminate, so that it goes away some time after
// its delete.
type releaser struct {
	c    client.Client
	seen bool
}

func (r *releaser) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := r.c.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.DeletionTimestamp == nil {
		return reconcile.Result{}, nil
	}
	if !r.seen {
		r.seen = true
		return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
	}
	if !controllerutil.RemoveFinalizer(&cm, holdFinalizer) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.c.Update(ctx, &cm)
}

// bystander is a controller under test that does nothing.
var bystander = simulator.ControllerSpec{Name: "bystander", For: &corev1.Secret{}, New: func(client.Client) reconcile.Reconciler {
	return reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
}}

func createHeld(ctx context.Context, c client.Client) error {
	return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x", Finalizers: []string{holdFinalizer}}})
}

func deleteX(ctx context.Context, c client.Client) error {
	return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}})
}

// recreateScenario deletes a ConfigMap held by a finalizer and creates it
// again: the create meets AlreadyExists while the old one terminates.
// With release, a controller lets the old one go.
func recreateScenario(release bool, timeout model.Time, props ...properties.Property) *simulator.Scenario {
	sc := &simulator.Scenario{
		Name:   "recreate",
		Scheme: cmScheme(),
		Workload: []simulator.WorkloadStep{
			{Name: "create x", Do: createHeld},
			{Name: "delete x", Do: deleteX},
			{Name: "create x again", Do: createHeld, Timeout: timeout},
		},
		Controllers: []simulator.ControllerSpec{bystander},
		Properties:  props,
	}
	if release {
		sc.Controllers = []simulator.ControllerSpec{{Name: "releaser", For: &corev1.ConfigMap{}, New: func(c client.Client) reconcile.Reconciler { return &releaser{c: c} }}}
	}
	return sc
}

func count(lines, s string) int { return strings.Count(lines, s) }

// An AlreadyExists while the old object terminates is retried one
// DefaultRetryDelay later, until the create succeeds.
func TestWorkloadRetriesAlreadyExists(t *testing.T) {
	res, err := simulator.Run(recreateScenario(true, 0), &model.Sequence{}, simulator.RunOptions{})
	if err != nil {
		t.Fatalf("harness error: %v", err)
	}
	lines := res.History.Lines()
	if n := count(lines, "start: create x again"); n < 2 {
		t.Fatalf("the create after the delete ran %d times, want a retry:\n%s", n, lines)
	}
	if !strings.Contains(lines, "AlreadyExists") || !strings.Contains(lines, "done: create x again") {
		t.Fatalf("want an AlreadyExists, then the step done:\n%s", lines)
	}
	if len(res.Violations) != 0 {
		t.Fatalf("a workload that got through reports %v", res.Violations)
	}
	// The retry waited DefaultRetryDelay of logical time.
	var first, second model.Time
	seen := 0
	for _, e := range res.History.Events {
		if e.Op == model.OpWorkload && e.Detail == "start: create x again" {
			if seen == 0 {
				first = e.Time
			} else if seen == 1 {
				second = e.Time
			}
			seen++
		}
	}
	if second-first < simulator.DefaultRetryDelay {
		t.Errorf("the retry came %s after the first attempt, want at least %s", second-first, simulator.DefaultRetryDelay)
	}
}

// A Do that keeps failing past its Timeout is the finding WorkloadStuck,
// not silence and not a harness error.
func TestWorkloadRetryTimeoutIsStuck(t *testing.T) {
	res, err := simulator.Run(recreateScenario(false, 5000), &model.Sequence{}, simulator.RunOptions{})
	if err != nil {
		t.Fatalf("harness error: %v", err)
	}
	lines := res.History.Lines()
	if !strings.Contains(lines, "gave up retrying: create x again") {
		t.Fatalf("no give-up event:\n%s", lines)
	}
	if len(res.Violations) != 1 || res.Violations[0].Property != simulator.WorkloadStuck {
		t.Fatalf("want one WorkloadStuck finding, got %v", res.Violations)
	}
	v := res.Violations[0]
	for _, want := range []string{`"create x again"`, "Timeout of 5s", "kept failing", "AlreadyExists"} {
		if !strings.Contains(v.Explanation, want) {
			t.Errorf("the explanation lacks %q:\n%s", want, v.String())
		}
	}
	if n := count(lines, "start: create x again"); n != 6 {
		t.Errorf("%d attempts within a 5s Timeout with a 1s retry delay, want 6 (t=0..5s)", n)
	}
}

// A wait whose condition never holds gives up after the step's Timeout
// with the finding WorkloadStuck; a property that fails in the same run is
// the report instead (it says why).
func TestWorkloadWaitTimeoutIsStuck(t *testing.T) {
	never := func(context.Context, client.Reader) bool { return false }
	sc := &simulator.Scenario{
		Name:        "never",
		Scheme:      cmScheme(),
		Controllers: []simulator.ControllerSpec{bystander},
		Workload: []simulator.WorkloadStep{
			{Name: "wait for y", Do: func(context.Context, client.Client) error { return nil }, Until: never, Timeout: 30000},
		},
	}
	res, err := simulator.Run(sc, &model.Sequence{}, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 || res.Violations[0].Property != simulator.WorkloadStuck {
		t.Fatalf("want WorkloadStuck, got %v\n%s", res.Violations, res.History.Lines())
	}
	v := res.Violations[0]
	if !strings.Contains(v.Explanation, "Timeout of 30s") || !strings.Contains(v.Explanation, "never held") || res.History.Events[v.Step-1].Detail != "gave up waiting: wait for y" {
		t.Fatalf("the finding does not say which wait gave up when:\n%s", v.String())
	}
	if e := res.History.Events[v.Step-1]; e.Time != 30000 {
		t.Errorf("gave up at t=%s, want the Timeout 30s", e.Time)
	}

	sc.Properties = []properties.Property{properties.EventuallyConverges("EventuallyConverges(y exists)", func(s *properties.State) (bool, string) {
		_, ok := s.Get("ConfigMap", "default", "y")
		return ok, "no ConfigMap y"
	})}
	res, err = simulator.Run(sc, &model.Sequence{}, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 || res.Violations[0].Property != "EventuallyConverges(y exists)" {
		t.Fatalf("want the property's violation alone, got %v", res.Violations)
	}
}

// An error outside the retry policy is the scenario's bug: a harness error.
func TestWorkloadUnexpectedErrorIsHarnessError(t *testing.T) {
	sc := recreateScenario(true, 0)
	sc.Workload[2].Retry = func(error) bool { return false }
	_, err := simulator.Run(sc, &model.Sequence{}, simulator.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), `workload step "create x again" failed`) || !strings.Contains(err.Error(), "AlreadyExists") && !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("want a harness error naming the step, got %v", err)
	}
}

// A give-up is no finding when a fault was in force at any moment of the
// wait, even one healed before the give-up: the controller could not be
// expected to converge in what was left of the Timeout. The same wait
// without the fault is the finding (TestWorkloadWaitTimeoutIsStuck).
func TestWorkloadWaitOverlappingAFaultIsNoFinding(t *testing.T) {
	never := func(context.Context, client.Reader) bool { return false }
	sc := &simulator.Scenario{
		Name:        "never-faulted",
		Scheme:      cmScheme(),
		Controllers: []simulator.ControllerSpec{bystander},
		Workload: []simulator.WorkloadStep{
			{Name: "wait for y", Do: func(context.Context, client.Client) error { return nil }, Until: never, Timeout: 30000},
		},
		Faults: model.FaultBudget{Stale: 1},
	}
	res, err := simulator.RunScript(sc, []simulator.ScriptStep{
		{After: "start: wait for y", Label: "pause apiserver-1 Secret cache"},
		{After: "fault PauseCache Secret", Label: "resume apiserver-1 Secret cache"},
	}, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lines := res.History.Lines()
	pause, resume, gaveUp := strings.Index(lines, "fault PauseCache"), strings.Index(lines, "fault ResumeCache"), strings.Index(lines, "gave up waiting: wait for y")
	if pause < 0 || resume < pause || gaveUp < resume {
		t.Fatalf("want the cache paused and resumed during the wait, then the give-up:\n%s", lines)
	}
	if len(res.Violations) != 0 {
		t.Fatalf("a wait that overlapped a paused cache reports %v", res.Violations)
	}
}
