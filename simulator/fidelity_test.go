package simulator_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// A property that asks ground truth for a kind the scheme does not know
// (a typo) stops the run with a harness error naming the kind, instead of
// holding vacuously; and the panic, though raised while a reconcile's API
// call was being recorded, is not reported as the reconciler's panic.
func TestPropertyPanicIsHarnessError(t *testing.T) {
	sc := webScenario()
	sc.Properties = append(sc.Properties, properties.EventuallyConverges("Typo", func(s *properties.State) (bool, string) {
		return len(s.List("Webapp", "", nil)) > 0, "no WebApp"
	}))
	res, err := simulator.Run(sc, &model.Values{}, simulator.RunOptions{})
	if err == nil {
		t.Fatalf("a property asking for the unknown kind Webapp ran to the end; violations %v", res.Violations)
	}
	for _, want := range []string{`unknown kind "Webapp"`, "did you mean WebApp?", "a property panicked", "fix the property"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(res.History.Lines(), " Panic ") {
		t.Errorf("the property's panic was recorded as a reconciler panic:\n%s", res.History.Lines())
	}
}

// CaughtUp is recorded once, after Settle, when no informer has an event
// left to receive: NoStuckReconcile counts failures only from there.
func TestCaughtUpRecordedAfterSettleOnce(t *testing.T) {
	res, err := simulator.Run(webScenario(), &model.Values{}, simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	settle, caught, n := 0, 0, 0
	for _, e := range res.History.Events {
		switch e.Op {
		case model.OpSettle:
			settle = e.Step
		case model.OpCaughtUp:
			caught = e.Step
			n++
		}
	}
	if settle == 0 || n != 1 || caught < settle {
		t.Fatalf("want one CaughtUp after Settle (step %d), got %d, the last at step %d:\n%s", settle, n, caught, res.History.Lines())
	}
}

// podWatcher reconciles pods and records, as ConfigMap
// saw-terminating-<pod>, that it read one Terminating.
type podWatcher struct{ c client.Client }

func (r *podWatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var p corev1.Pod
	if err := r.c.Get(ctx, req.NamespacedName, &p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if p.DeletionTimestamp == nil {
		return reconcile.Result{}, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: "saw-terminating-" + p.Name}}
	if err := r.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

func podPhaseIs(name string, phase corev1.PodPhase) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		var p corev1.Pod
		return r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: name}, &p) == nil && p.Status.Phase == phase
	}
}

func podGone(name string) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		return apierrors.IsNotFound(r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: name}, &corev1.Pod{}))
	}
}

// A deleted pod stays Terminating (deletionTimestamp = now + its grace
// period) until the kubelet confirms once the grace period has passed on
// the logical clock, and watch events reach the informer one per delivery
// step: a controller sees the Terminating pod. The issue-12 regression:
// the kubelet confirmed at the next step and one delivery handed the
// informer both events, so no controller ever read a Terminating pod.
func TestControllerSeesTerminatingPod(t *testing.T) {
	grace := int64(20)
	sc := &simulator.Scenario{
		Name:   "terminating",
		Scheme: webScheme,
		Controllers: []simulator.ControllerSpec{{
			Name: "podwatcher", For: &corev1.Pod{},
			New: func(c client.Client) reconcile.Reconciler { return &podWatcher{c: c} },
		}},
		Workload: []simulator.WorkloadStep{
			{Name: "create pod p", Do: func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "p"},
					Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}})
			}, Until: podPhaseIs("p", corev1.PodRunning)},
			{Name: "delete pod p", Do: func(ctx context.Context, c client.Client) error {
				return c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "p"}})
			}, Until: podGone("p")},
		},
	}
	res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	del := findEvent(h, 0, eventIs(model.ActorUser, model.OpDelete, "Pod", "default/p"))
	confirm := findEvent(h, 0, eventIs(model.ActorKubelet, model.OpDelete, "Pod", "default/p"))
	bind := findEvent(h, 0, eventIs(model.ActorKubelet, model.OpCreate, "Pod", "default/p"))
	if bind < 0 || del < 0 || confirm < del || h.Events[confirm].Change != model.ChangeDeleted {
		t.Fatalf("want the pod bound, deleted by the user, then removed by the kubelet's confirmation (%d %d %d):\n%s", bind, del, confirm, lines)
	}
	if got := h.Events[confirm].Time - h.Events[del].Time; got != model.Time(grace*1000) {
		t.Fatalf("the kubelet confirmed %s after the delete, want the grace period %ds:\n%s", got, grace, lines)
	}
	saw := findEvent(h, del, eventIs("controller/podwatcher", model.OpCreate, "ConfigMap", "default/saw-terminating-p"))
	if saw < 0 || saw > confirm {
		t.Fatalf("the controller never read the Terminating pod before it went:\n%s", lines)
	}
	// One watch event per delivery.
	for _, e := range h.Events {
		if e.Op == model.OpDeliver && e.Kind == "Pod" && e.Detail != "added" && e.Detail != "modified" && e.Detail != "deleted" {
			t.Fatalf("a delivery of more or less than one event: %s", e.Line())
		}
	}
}

// webPresence creates ConfigMap alive-<name> while its WebApp exists and
// deletes it once the WebApp is gone, as its informer tells it.
type webPresence struct{ c client.Client }

func (r *webPresence) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: "alive-" + req.Name}}
	err := r.c.Get(ctx, req.NamespacedName, &WebApp{})
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, client.IgnoreNotFound(r.c.Delete(ctx, cm))
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

func presenceScenario(faults model.FaultBudget) *simulator.Scenario {
	return &simulator.Scenario{
		Name:   "lost-delete",
		Scheme: webScheme,
		Controllers: []simulator.ControllerSpec{{
			Name: "presence", For: &WebApp{},
			New: func(c client.Client) reconcile.Reconciler { return &webPresence{c: c} },
		}},
		Workload: []simulator.WorkloadStep{
			{Name: "create w", Do: createWeb("w", 1), Until: configMapExists("alive-w")},
			{Name: "delete w", Do: func(ctx context.Context, c client.Client) error {
				return c.Delete(ctx, &WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}})
			}, Until: func(ctx context.Context, r client.Reader) bool { return !configMapExists("alive-w")(ctx, r) }},
		},
		Faults: faults,
	}
}

// An object's last event, its deletion, can be dropped: the controller
// never learns the object is gone (its informer still holds it) until the
// informer relists, here after a watch expiry (410 Gone, a fault of its
// own); the relist notifies the missed deletion. The issue-12 regression:
// only an event a later event superseded could be dropped, so "the
// controller never observed the deletion" could not be expressed.
func TestDroppedDeleteHealedOnlyByRelist(t *testing.T) {
	res, _ := runScripted(t, presenceScenario(model.FaultBudget{Drops: 1, Expiries: 1}), []simulator.ScriptStep{
		{After: "user Delete WebApp default/w", Label: "drop WebApp event for controller/presence"},
		{After: "gave up waiting: delete w", Label: "expire WebApp watch of controller/presence"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	drop := findEvent(h, 0, eventIs(model.ActorFault, model.OpDropEvent, "WebApp", "default/w"))
	expire := findEvent(h, 0, func(e *model.Event) bool { return e.Op == model.OpExpireWatch })
	if drop < 0 || h.Events[drop].Detail != "deleted for controller/presence" || expire < drop {
		t.Fatalf("want the deletion's event dropped, then the watch expired (%d %d):\n%s", drop, expire, lines)
	}
	// For the whole wait (10 minutes of logical time) the controller does
	// not learn that w is gone: no reconcile, alive-w stays.
	if r := findEvent(h, drop, eventIs("controller/presence", model.OpReconcile, "WebApp", "default/w")); r >= 0 && r < expire {
		t.Fatalf("the controller reconciled w before any relist, at %q:\n%s", h.Events[r].Line(), lines)
	}
	gone := findEvent(h, expire, eventIs("controller/presence", model.OpDelete, "ConfigMap", "default/alive-w"))
	if gone < 0 || !res.Quiescent {
		t.Fatalf("after the relist the controller should see the deletion and clean up (quiescent %v, %v):\n%s", res.Quiescent, res.Violations, lines)
	}
	// The user's wait for the clean-up timed out while the lost event was
	// still unhealed: the history records the give-up, but it is no
	// finding, as under a paused cache. No controller can converge on an
	// event it never got; flagging that would flag every operator. What
	// the fault can show is what the controller does wrong meanwhile, and
	// whether it recovers after the relist: here it does.
	if findEvent(h, drop, func(e *model.Event) bool { return e.Op == model.OpWorkload && e.Detail == "gave up waiting: delete w" }) < 0 {
		t.Fatalf("the user's wait did not time out while the event was lost:\n%s", lines)
	}
	if len(res.Violations) != 0 {
		t.Fatalf("want no finding (a give-up while a lost event is unhealed is none), got %v", res.Violations)
	}
	relisted := findEvent(h, expire, func(e *model.Event) bool {
		return e.Op == model.OpDeliver && strings.HasPrefix(e.Detail, "watch expired (410): relisted; 1 changed")
	})
	if relisted < 0 || relisted > gone {
		t.Fatalf("want the relist to notify the one missed deletion:\n%s", lines)
	}
}

// Without an expiry in the budget, the settle phase heals the informer
// that lost an event (its watch expires once the faults are over), and
// CaughtUp waits for it.
func TestDroppedDeleteHealedAtSettle(t *testing.T) {
	res, _ := runScripted(t, presenceScenario(model.FaultBudget{Drops: 1}), []simulator.ScriptStep{
		{After: "user Delete WebApp default/w", Label: "drop WebApp event for controller/presence"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	settle := findEvent(h, 0, func(e *model.Event) bool { return e.Op == model.OpSettle })
	relist := findEvent(h, 0, func(e *model.Event) bool {
		return e.Op == model.OpDeliver && strings.HasPrefix(e.Detail, "lost events: watch expired (410), relisted; 1 changed")
	})
	caught := findEvent(h, 0, func(e *model.Event) bool { return e.Op == model.OpCaughtUp })
	gone := findEvent(h, 0, eventIs("controller/presence", model.OpDelete, "ConfigMap", "default/alive-w"))
	if settle < 0 || relist < settle || caught < relist || gone < relist || !res.Quiescent {
		t.Fatalf("want Settle, the healing relist, CaughtUp, and the clean-up after it (%d %d %d %d):\n%s", settle, relist, caught, gone, lines)
	}
}
