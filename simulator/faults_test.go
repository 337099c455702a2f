package simulator_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// findEvent returns the index of the first event at or after from that
// match says yes to, or -1.
func findEvent(h *model.History, from int, match func(e *model.Event) bool) int {
	for i := from; i < len(h.Events); i++ {
		if match(&h.Events[i]) {
			return i
		}
	}
	return -1
}

func eventIs(actor model.Actor, op model.Op, kind, key string) func(e *model.Event) bool {
	return func(e *model.Event) bool {
		return e.Actor == actor && e.Op == op && (kind == "" || e.Kind == kind) && (key == "" || e.Key() == key)
	}
}

// twoWrites creates ConfigMap a, then ConfigMap b, each labelled with the
// incarnation of the reconciler that created it.
type twoWrites struct {
	c           client.Client
	incarnation int
}

func (r *twoWrites) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: name,
			Labels: map[string]string{"incarnation": strconv.Itoa(r.incarnation)}}}
		if err := r.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

func TestCrashMidReconcileRestartsFreshIncarnation(t *testing.T) {
	incarnations := 0
	sc := &simulator.Scenario{
		Name:    "crash",
		Scheme:  webScheme,
		Objects: []client.Object{&WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}, Spec: WebAppSpec{Replicas: 1}}},
		Controllers: []simulator.ControllerSpec{{
			Name: "two", For: &WebApp{},
			New: func(c client.Client) reconcile.Reconciler {
				incarnations++
				return &twoWrites{c: c, incarnation: incarnations}
			},
		}},
		Faults: model.FaultBudget{Crashes: 1},
	}
	res, _ := runScripted(t, sc, []simulator.ScriptStep{
		{After: "Create ConfigMap default/a", Label: "crash controller/two, restart on apiserver-1"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	if testing.Verbose() {
		t.Log(lines)
	}

	createA := findEvent(h, 0, eventIs("controller/two", model.OpCreate, "ConfigMap", "default/a"))
	crash := findEvent(h, 0, eventIs(model.ActorFault, model.OpCrash, "", ""))
	restart := findEvent(h, 0, eventIs(model.ActorFault, model.OpRestart, "", ""))
	createB := findEvent(h, 0, func(e *model.Event) bool {
		return eventIs("controller/two", model.OpCreate, "ConfigMap", "default/b")(e) && e.Err == ""
	})
	if createA < 0 || crash < 0 || restart < 0 || createB < 0 {
		t.Fatalf("missing events (create a %d, crash %d, restart %d, create b %d):\n%s", createA, crash, restart, createB, lines)
	}
	if !(createA < crash && crash < restart && restart < createB) {
		t.Fatalf("want create a < crash < restart < create b, got %d %d %d %d:\n%s", createA, crash, restart, createB, lines)
	}
	if ev := h.Events[crash]; ev.Name != "controller/two" || !strings.Contains(ev.Detail, "in reconcile default/w before API call 2") {
		t.Fatalf("crash event %q: want it to name the reconcile in flight and API call 2", ev.Line())
	}
	if !strings.Contains(h.Events[restart].Detail, "apiserver-1") {
		t.Fatalf("restart event %q does not name its apiserver", h.Events[restart].Line())
	}
	if incarnations != 2 {
		t.Fatalf("the reconciler factory ran %d times, want 2 (start and restart)", incarnations)
	}
	// The restarted controller reconciles again: its Create of a fails with
	// AlreadyExists (the first incarnation's write survived the crash), and
	// it goes on to create b.
	if i := findEvent(h, restart, eventIs("controller/two", model.OpCreate, "ConfigMap", "default/a")); i < 0 || !strings.HasPrefix(h.Events[i].Err, "AlreadyExists") {
		t.Fatalf("the new incarnation did not retry a (and meet AlreadyExists):\n%s", lines)
	}
	a, okA := res.World.Peek(&corev1.ConfigMap{}, webNS, "a")
	b, okB := res.World.Peek(&corev1.ConfigMap{}, webNS, "b")
	if !okA || !okB {
		t.Fatalf("ConfigMaps a %v, b %v: want both", okA, okB)
	}
	if a.GetLabels()["incarnation"] != "1" || b.GetLabels()["incarnation"] != "2" {
		t.Fatalf("a written by incarnation %s, b by %s; want 1 and 2", a.GetLabels()["incarnation"], b.GetLabels()["incarnation"])
	}
	if !res.Quiescent {
		t.Fatalf("not quiescent:\n%s", lines)
	}
	if n := strings.Count(lines, "fault Crash"); n != 1 {
		t.Fatalf("%d crashes, want 1 (the budget):\n%s", n, lines)
	}
}

// getter reads its WebApp and does nothing else.
type getter struct{ c client.Client }

func (r *getter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app WebApp
	return reconcile.Result{}, client.IgnoreNotFound(r.c.Get(ctx, req.NamespacedName, &app))
}

func TestStaleCacheAfterRestartOnPausedApiserver(t *testing.T) {
	sc := &simulator.Scenario{
		Name:       "stale",
		Scheme:     webScheme,
		APIServers: 2,
		Controllers: []simulator.ControllerSpec{{
			Name: "reader", For: &WebApp{},
			New: func(c client.Client) reconcile.Reconciler { return &getter{c: c} },
		}},
		Workload: []simulator.WorkloadStep{
			{Name: "create w", Do: createWeb("w", 1)},
			{Name: "scale w to 2", Do: scaleWeb("w", 2)},
		},
		// An eviction left in the budget (there is no pod to evict) keeps
		// the fault phase going after the crash, so the restarted
		// controller reconciles while the cache is still paused.
		Faults: model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1},
	}
	res, _ := runScripted(t, sc, []simulator.ScriptStep{
		{After: "done: create w", Label: "pause apiserver-2 WebApp cache"},
		{After: "user Update WebApp default/w", Label: "crash controller/reader, restart on apiserver-2"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	if testing.Verbose() {
		t.Log(lines)
	}

	created := findEvent(h, 0, eventIs(model.ActorUser, model.OpCreate, "WebApp", "default/w"))
	pause := findEvent(h, 0, eventIs(model.ActorFault, model.OpPauseCache, "WebApp", ""))
	updated := findEvent(h, 0, eventIs(model.ActorUser, model.OpUpdate, "WebApp", "default/w"))
	restart := findEvent(h, 0, eventIs(model.ActorFault, model.OpRestart, "", ""))
	if created < 0 || pause < 0 || updated < 0 || restart < 0 || !(created < pause && pause < updated && updated < restart) {
		t.Fatalf("want create < pause < update < restart, got %d %d %d %d:\n%s", created, pause, updated, restart, lines)
	}
	if ev := h.Events[pause]; ev.Server != 2 || ev.ReadRev != h.Events[created].Rev {
		t.Fatalf("pause %q: want apiserver-2 paused at the CR's first version (rev %d)", ev.Line(), h.Events[created].Rev)
	}
	if d := h.Events[restart].Detail; !strings.Contains(d, "apiserver-2") || !strings.Contains(d, "(paused cache)") {
		t.Fatalf("restart %q: want apiserver-2 and a paused cache", h.Events[restart].Line())
	}
	get := findEvent(h, restart, eventIs("controller/reader", model.OpGet, "WebApp", "default/w"))
	if get < 0 {
		t.Fatalf("the restarted controller never read its CR:\n%s", lines)
	}
	ev := h.Events[get]
	if ev.Rev != h.Events[created].Rev || ev.Rev == h.Events[updated].Rev {
		t.Fatalf("restarted Get %q returned rv %d; want the old version %d (the update is %d)", ev.Line(), ev.Rev, h.Events[created].Rev, h.Events[updated].Rev)
	}
	if !ev.Stale || ev.Server != 2 || !strings.Contains(ev.Line(), ", stale)") {
		t.Fatalf("restarted Get %q: want it marked stale, served by apiserver-2", ev.Line())
	}
	// Before the pause, the first incarnation's reads were fresh.
	for i := 0; i < restart; i++ {
		if e := h.Events[i]; e.Actor == "controller/reader" && e.Op == model.OpGet && e.Stale && e.Server == 1 {
			t.Fatalf("a read through the unpaused apiserver-1 is stale: %q", e.Line())
		}
	}
	// The settle phase resumes the cache (here before that Get: the
	// informer, listed at the old revision, still serves it) and the
	// controller catches up through its next delivery.
	resume := findEvent(h, restart, eventIs(model.ActorFault, model.OpResumeCache, "WebApp", ""))
	if resume < 0 {
		t.Fatalf("the paused cache was never resumed:\n%s", lines)
	}
	fresh := findEvent(h, get+1, func(e *model.Event) bool {
		return eventIs("controller/reader", model.OpGet, "WebApp", "default/w")(e) && e.Rev == h.Events[updated].Rev && !e.Stale
	})
	if fresh < 0 || !res.Quiescent {
		t.Fatalf("after the resume the controller did not read the update (quiescent %v):\n%s", res.Quiescent, lines)
	}
}

// marker records what generation of its WebApp it reconciled by creating
// ConfigMap seen-<generation>.
type marker struct{ c client.Client }

func (r *marker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app WebApp
	if err := r.c.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: "seen-" + strconv.FormatInt(app.Generation, 10)}}
	if err := r.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

func configMapExists(name string) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		return r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: name}, &corev1.ConfigMap{}) == nil
	}
}

func TestDropWatchEventLeavesIntermediateStateUnobserved(t *testing.T) {
	sc := &simulator.Scenario{
		Name:   "drop",
		Scheme: webScheme,
		Controllers: []simulator.ControllerSpec{{
			Name: "marker", For: &WebApp{},
			New: func(c client.Client) reconcile.Reconciler { return &marker{c: c} },
		}},
		Workload: []simulator.WorkloadStep{
			{Name: "create w", Do: createWeb("w", 1), Until: configMapExists("seen-1")},
			// Two writes in one user step: both watch events are pending
			// together, and the first (generation 2 without the label) is
			// dropped. The controller never observes that state, but it
			// does see the later one.
			{Name: "scale w to 2, then label it", Do: func(ctx context.Context, c client.Client) error {
				if err := scaleWeb("w", 2)(ctx, c); err != nil {
					return err
				}
				var app WebApp
				if err := c.Get(ctx, client.ObjectKey{Namespace: webNS, Name: "w"}, &app); err != nil {
					return err
				}
				app.Labels = map[string]string{"touched": "yes"}
				return c.Update(ctx, &app)
			}, Until: configMapExists("seen-2")},
		},
		Faults: model.FaultBudget{Drops: 1},
	}
	res, _ := runScripted(t, sc, []simulator.ScriptStep{
		{After: "user Update WebApp default/w", Label: "drop WebApp event for controller/marker"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	first := findEvent(h, 0, eventIs(model.ActorUser, model.OpUpdate, "WebApp", "default/w"))
	second := findEvent(h, first+1, eventIs(model.ActorUser, model.OpUpdate, "WebApp", "default/w"))
	drop := findEvent(h, 0, eventIs(model.ActorFault, model.OpDropEvent, "WebApp", "default/w"))
	if first < 0 || second < 0 || drop < 0 || drop < second {
		t.Fatalf("want two user updates, then the drop; got %d %d %d:\n%s", first, second, drop, lines)
	}
	if ev := h.Events[drop]; ev.Rev != h.Events[first].Rev {
		t.Fatalf("drop %q: want the first update's event (rev %d)", ev.Line(), h.Events[first].Rev)
	}
	// The controller never reads the intermediate version...
	for i := range h.Events {
		e := &h.Events[i]
		if e.Actor == "controller/marker" && e.Op == model.OpGet && e.Kind == "WebApp" && e.Rev == h.Events[first].Rev {
			t.Fatalf("the controller read the dropped intermediate state at %q:\n%s", e.Line(), lines)
		}
	}
	// ...but it reconciles the later one, and the workload completes.
	if findEvent(h, drop, eventIs("controller/marker", model.OpCreate, "ConfigMap", "default/seen-2")) < 0 || !res.Quiescent {
		t.Fatalf("the controller did not act on the state after the dropped event (quiescent %v):\n%s", res.Quiescent, lines)
	}
	// The budget allows one drop.
	if strings.Count(lines, "fault DropEvent") != 1 {
		t.Fatalf("want exactly one drop:\n%s", lines)
	}
}

func TestEvictPodRecreatedByStatefulSetController(t *testing.T) {
	sc := webScenario()
	sc.Name = "evict"
	sc.Workload = sc.Workload[:1] // create with 2 replicas, wait until ready
	sc.Faults = model.FaultBudget{Evictions: 1}
	res, _ := runScripted(t, sc, []simulator.ScriptStep{
		{After: "done: create web with 2 replicas", Label: "evict pod default/web-0"},
	}, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	if testing.Verbose() {
		t.Log(lines)
	}
	if len(res.Violations) > 0 || !res.Quiescent {
		t.Fatalf("violations %v, quiescent %v:\n%s", res.Violations, res.Quiescent, lines)
	}

	firstCreate := findEvent(h, 0, eventIs(model.ActorStatefulSet, model.OpCreate, "Pod", "default/web-0"))
	evict := findEvent(h, 0, eventIs(model.ActorFault, model.OpEvict, "Pod", "default/web-0"))
	del := findEvent(h, 0, eventIs(model.ActorFault, model.OpDelete, "Pod", "default/web-0"))
	if firstCreate < 0 || evict < 0 || del != evict+1 || h.Events[del].Err != "" {
		t.Fatalf("want the eviction followed by fault's Delete of the pod (create %d, evict %d, delete %d):\n%s", firstCreate, evict, del, lines)
	}
	oldUID := h.Events[firstCreate].Object.(*corev1.Pod).UID
	gone := findEvent(h, del, func(e *model.Event) bool {
		return e.Kind == "Pod" && e.Key() == "default/web-0" && e.Change == model.ChangeDeleted
	})
	recreate := findEvent(h, del, eventIs(model.ActorStatefulSet, model.OpCreate, "Pod", "default/web-0"))
	if gone < 0 || recreate < gone {
		t.Fatalf("want the pod gone, then recreated by the StatefulSet controller (gone %d, recreate %d):\n%s", gone, recreate, lines)
	}
	newUID := h.Events[recreate].Object.(*corev1.Pod).UID
	if newUID == oldUID || newUID == "" {
		t.Fatalf("recreated pod has UID %q, the evicted one had %q", newUID, oldUID)
	}
	pod, ok := res.World.Peek(&corev1.Pod{}, webNS, "web-0")
	if !ok || pod.GetUID() != newUID || !podReady(pod.(*corev1.Pod)) {
		t.Fatalf("web-0 at the end: found %v, uid %v, want %q running and ready", ok, pod, newUID)
	}
	if n := strings.Count(lines, "fault Evict"); n != 1 {
		t.Fatalf("%d evictions, want 1", n)
	}
	// The evicted pod's claim survives: the new pod mounts the same PVC.
	claims := res.World.PeekList(&corev1.PersistentVolumeClaim{}, webNS)
	if len(claims) != 2 || claims[0].GetName() != "data-web-0" || claims[0].GetDeletionTimestamp() != nil {
		t.Fatalf("%d claims after the eviction, want data-web-0 and data-web-1 kept", len(claims))
	}
	var app WebApp
	if err := res.World.Reader().Get(context.Background(), client.ObjectKey{Namespace: webNS, Name: "web"}, &app); err != nil || app.Status.ReadyReplicas != 2 {
		t.Fatalf("WebApp after the eviction: %v, ready %d; want 2 ready again", err, app.Status.ReadyReplicas)
	}
}

// An unscripted budget is never spent by a ScriptChooser: once only faults
// and the settle decision are left, it settles.
func TestCrashNotInjectedUnlessScripted(t *testing.T) {
	sc := &simulator.Scenario{
		Name:    "unscripted",
		Scheme:  webScheme,
		Objects: []client.Object{&WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}, Spec: WebAppSpec{Replicas: 1}}},
		Controllers: []simulator.ControllerSpec{{
			Name: "two", For: &WebApp{},
			New: func(c client.Client) reconcile.Reconciler { return &twoWrites{c: c, incarnation: 1} },
		}},
		Faults: model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1},
	}
	res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
	lines := res.History.Lines()
	if strings.Contains(lines, "fault Crash") || strings.Contains(lines, "fault PauseCache") || !strings.Contains(lines, "fault Settle") || !res.Quiescent {
		t.Fatalf("want no fault and a settle:\n%s", lines)
	}
}
