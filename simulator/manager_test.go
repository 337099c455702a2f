package simulator

import (
	"context"
	"errors"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// probe is a reconciler wired the way operators wire theirs: through
// ctrl.NewControllerManagedBy with predicates, Owns with and without
// MatchEveryOwner, and a handler.Funcs watch. It records what it saw.
type probe struct {
	c       client.Client
	api     client.Reader
	rec     record.EventRecorder
	setups  int
	updates []string // "old->new" label v of ConfigMap updates seen by handler.Funcs
	seen    []string // per reconcile: what the cached client and the API reader returned
}

func (p *probe) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cached, live corev1.ConfigMap
	key := types.NamespacedName{Namespace: req.Namespace, Name: "cm"}
	errC := p.c.Get(ctx, key, &cached)
	errA := p.api.Get(ctx, key, &live)
	p.seen = append(p.seen, req.Name+": cached="+probeState(&cached, errC)+" api="+probeState(&live, errA))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
	p.rec.Eventf(d, corev1.EventTypeNormal, "Probed", "probed %s", req.Name)
	return reconcile.Result{}, nil
}

func probeState(cm *corev1.ConfigMap, err error) string {
	if apierrors.IsNotFound(err) {
		return "notfound"
	}
	if err != nil {
		return err.Error()
	}
	return cm.Labels["v"]
}

func (p *probe) setup(opts controller.Options, extra func(mgr manager.Manager) error) func(ctx context.Context, mgr manager.Manager) error {
	return func(ctx context.Context, mgr manager.Manager) error {
		p.setups++
		p.c, p.api, p.rec = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("probe")
		if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}); err != nil {
			return err
		}
		if extra != nil {
			if err := extra(mgr); err != nil {
				return err
			}
		}
		return builder.ControllerManagedBy(mgr).
			For(&appsv1.Deployment{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
			Owns(&corev1.Pod{}).
			Owns(&corev1.Service{}, builder.MatchEveryOwner).
			Watches(&corev1.ConfigMap{}, handler.Funcs{
				UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					p.updates = append(p.updates, e.ObjectOld.GetLabels()["v"]+"->"+e.ObjectNew.GetLabels()["v"])
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ObjectNew.GetNamespace(), Name: "from-cm"}})
				},
			}).
			WithOptions(opts).
			Complete(p)
	}
}

func mgrScheme() *runtime.Scheme { return NewScheme() }

func mgrScenario(setup func(context.Context, manager.Manager) error, objs ...client.Object) *Scenario {
	return &Scenario{
		Name: "manager", Scheme: mgrScheme(), NoBuiltins: true, Objects: objs,
		StoreOptions: StoreOptions{Namespaces: []string{"ns"}},
		Controllers:  []ControllerSpec{{Name: "probe", For: &appsv1.Deployment{}, Setup: setup}},
	}
}

type mgrEnv struct {
	t    *testing.T
	w    *World
	user *Client
	ctx  context.Context
}

func newMgrEnv(t *testing.T, sc *Scenario) *mgrEnv {
	t.Helper()
	w, err := NewWorld(sc, nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.cleanup)
	return &mgrEnv{t: t, w: w, user: w.Client(model.ActorUser, 1, true), ctx: context.Background()}
}

func (e *mgrEnv) host() *Host { return e.w.hosts[0] }

// deliverAll hands the controller every pending watch event.
func (e *mgrEnv) deliverAll() {
	h := e.host()
	for again := true; again; {
		again = false
		for _, inf := range h.informers {
			if inf.hasPending() {
				e.w.deliver(h, inf)
				again = true
			}
		}
	}
}

// queued returns the ready requests, sorted, and empties the queue.
func (e *mgrEnv) takeQueued() []string {
	q := e.host().queue
	var out []string
	for {
		r, ok := q.Pop()
		if !ok {
			break
		}
		q.Done(r)
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

// reconcileAll runs every queued reconcile to its end.
func (e *mgrEnv) reconcileAll() {
	h := e.host()
	for h.enabled() {
		h.step()
	}
}

func (e *mgrEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *mgrEnv) wantQueued(what string, want ...string) {
	e.t.Helper()
	e.deliverAll()
	got := e.takeQueued()
	if !slices.Equal(got, want) {
		e.t.Fatalf("%s: queued %v, want %v", what, got, want)
	}
}

func mgrDeployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		},
	}
}

func ownedBy(obj client.Object, owner *appsv1.Deployment, controller bool) {
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: &controller}})
}

func mgrPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
}

// The builder's For predicates, Owns handlers (EnqueueRequestForOwner with
// and without OnlyControllerOwner) and a handler.Funcs watch run as
// controller-runtime runs them: on the initial list and on every delivered
// event.
func TestManagerPredicatesAndHandlers(t *testing.T) {
	p := &probe{}
	e := newMgrEnv(t, mgrScenario(p.setup(controller.Options{}, nil)))
	d := mgrDeployment("d1")
	e.must(e.user.Create(e.ctx, d))
	e.wantQueued("create passes GenerationChanged (creates always pass)", "ns/d1")

	// Status-only update: generation unchanged, labels unchanged.
	d.Status.ObservedGeneration = 5
	e.must(e.user.Status().Update(e.ctx, d))
	e.wantQueued("status update filtered by GenerationChanged|LabelChanged")

	d.Annotations = map[string]string{"note": "x"}
	e.must(e.user.Update(e.ctx, d))
	e.wantQueued("annotation-only update filtered")

	d.Labels["tier"] = "web"
	e.must(e.user.Update(e.ctx, d))
	e.wantQueued("label update passes LabelChanged", "ns/d1")

	replicas := int32(3)
	d.Spec.Replicas = &replicas
	e.must(e.user.Update(e.ctx, d))
	e.wantQueued("spec update passes GenerationChanged", "ns/d1")

	// Owns(Pod): only the controller owner is enqueued.
	ctrlPod, otherPod := mgrPod("p1", ""), mgrPod("p2", "")
	ownedBy(ctrlPod, d, true)
	ownedBy(otherPod, d, false)
	e.must(e.user.Create(e.ctx, ctrlPod))
	e.must(e.user.Create(e.ctx, otherPod))
	e.wantQueued("pods: controller owner only", "ns/d1")
	e.must(e.user.Delete(e.ctx, ctrlPod, client.GracePeriodSeconds(0)))
	e.wantQueued("deleted owned pod enqueues its owner", "ns/d1")

	// Owns(Service, MatchEveryOwner): any owner.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s1"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	ownedBy(svc, d, false)
	e.must(e.user.Create(e.ctx, svc))
	e.wantQueued("service: MatchEveryOwner", "ns/d1")

	// handler.Funcs sees old and new objects; it has no CreateFunc.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: map[string]string{"v": "a"}}}
	e.must(e.user.Create(e.ctx, cm))
	e.wantQueued("ConfigMap create: no CreateFunc")
	cm.Labels["v"] = "b"
	e.must(e.user.Update(e.ctx, cm))
	e.wantQueued("ConfigMap update via handler.Funcs", "ns/from-cm")
	if !slices.Equal(p.updates, []string{"a->b"}) {
		t.Fatalf("handler.Funcs updates %v, want [a->b]", p.updates)
	}
}

// A restarted controller's sources list what its informers hold: every
// primary object and every owner of an owned object is enqueued once.
func TestManagerInitialList(t *testing.T) {
	d1, d2 := mgrDeployment("d1"), mgrDeployment("d2")
	d1.UID, d2.UID = "uid-d1", "uid-d2"
	pod := mgrPod("p", "")
	ownedBy(pod, d2, true)
	p := &probe{}
	e := newMgrEnv(t, mgrScenario(p.setup(controller.Options{}, nil), d1, d2, pod))
	if got := e.takeQueued(); !slices.Equal(got, []string{"ns/d1", "ns/d2"}) {
		t.Fatalf("initial queue %v", got)
	}
	if p.setups != 1 {
		t.Fatalf("Setup ran %d times", p.setups)
	}
	e.w.faults.crash(e.w, e.host(), e.w.Server(1))
	if p.setups != 2 {
		t.Fatalf("a crash did not run Setup again (%d runs)", p.setups)
	}
	if got := e.takeQueued(); !slices.Equal(got, []string{"ns/d1", "ns/d2"}) {
		t.Fatalf("queue after restart %v", got)
	}
}

// mgr.GetAPIReader reads from the apiserver, not from the informers: it
// sees a write the informer has not received, and a paused apiserver cache
// makes it stale. The event recorder's events land in the history.
func TestManagerAPIReaderAndEventRecorder(t *testing.T) {
	d := mgrDeployment("d1")
	p := &probe{}
	e := newMgrEnv(t, mgrScenario(p.setup(controller.Options{}, nil), d))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: map[string]string{"v": "a"}}}
	e.must(e.user.Create(e.ctx, cm))
	e.reconcileAll() // the initial request; the ConfigMap event is not delivered
	s := e.w.Server(1)
	c := s.Cache(e.w.kindOf(&corev1.ConfigMap{}))
	s.Sync(c)
	s.Pause(c)
	cm.Labels["v"] = "b"
	e.must(e.user.Update(e.ctx, cm))
	e.deliverAll()
	e.host().queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "d1"}})
	e.reconcileAll()
	want := []string{"d1: cached=notfound api=a", "d1: cached=a api=a"}
	if !slices.Equal(p.seen, want) {
		t.Fatalf("reads %q, want %q", p.seen, want)
	}
	var events []string
	for _, ev := range e.w.History.Events {
		if ev.Op == model.OpRecordEvent {
			events = append(events, ev.Kind+" "+ev.Namespace+"/"+ev.Name+" "+ev.Detail)
		}
	}
	if len(events) != 2 || events[0] != "Deployment ns/d1 probe: Normal Probed: probed d1" {
		t.Fatalf("recorded events %q", events)
	}
}

// MatchingFields on a cached List is served from the indexes registered
// with IndexField, exact matches only, as controller-runtime's cache.
func TestManagerFieldIndexer(t *testing.T) {
	p := &probe{}
	e := newMgrEnv(t, mgrScenario(p.setup(controller.Options{}, nil), mgrDeployment("d1"), mgrPod("a", "n1"), mgrPod("b", "n2"), mgrPod("c", "n1")))
	h := e.host()
	k := e.w.kindOf(&corev1.Pod{})
	objs, _, _, err := h.readList(k, &ListOptions{Namespace: "ns", Fields: fields.OneTermEqualSelector("spec.nodeName", "n1")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("pods on n1: %v", names)
	}
	if _, _, _, err := h.readList(k, &ListOptions{Fields: fields.OneTermEqualSelector("metadata.name", "a")}); err == nil || !strings.Contains(err.Error(), "index with name field:metadata.name does not exist") {
		t.Fatalf("unindexed field: %v", err)
	}
	if _, _, _, err := h.readList(k, &ListOptions{Fields: fields.OneTermNotEqualSelector("spec.nodeName", "n1")}); err == nil || !strings.Contains(err.Error(), "non-exact field matches") {
		t.Fatalf("non-exact selector: %v", err)
	}
}

// What opcheck does not model is refused when the world is built, with
// what to do.
func TestManagerRefusals(t *testing.T) {
	cases := []struct {
		name  string
		opts  controller.Options
		extra func(mgr manager.Manager) error
		spec  func(*ControllerSpec)
		want  string
	}{
		{name: "concurrent reconciles", opts: controller.Options{MaxConcurrentReconciles: 2}, want: "MaxConcurrentReconciles is 2"},
		{name: "other runnable", extra: func(mgr manager.Manager) error {
			return mgr.Add(manager.RunnableFunc(func(context.Context) error { return nil }))
		}, want: "opcheck runs only controllers"},
		{name: "setup error", extra: func(manager.Manager) error { return errors.New("boom") }, want: "Setup: boom"},
		{name: "mgr.Start", extra: func(mgr manager.Manager) error { return mgr.Start(context.Background()) }, want: "must not call mgr.Start"},
		{name: "wrong For", spec: func(s *ControllerSpec) { s.For = &corev1.Secret{} }, want: "does not watch that type"},
		{name: "Setup and Owns", spec: func(s *ControllerSpec) { s.Owns = []client.Object{&corev1.Pod{}} }, want: "leave the others empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &probe{}
			sc := mgrScenario(p.setup(tc.opts, tc.extra))
			if tc.spec != nil {
				tc.spec(&sc.Controllers[0])
			}
			_, err := NewWorld(sc, nil, RunOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A metadata-only watch (builder.OnlyMetadata) hands its handlers
// PartialObjectMetadata objects, as controller-runtime's metadata informer
// does; the typed watch of the same kind still gets typed objects.
func TestManagerMetadataOnlyWatch(t *testing.T) {
	var seen []string
	record := func(prefix string) handler.Funcs {
		return handler.Funcs{UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			switch o := e.ObjectNew.(type) {
			case *metav1.PartialObjectMetadata:
				seen = append(seen, prefix+" metadata "+o.Kind+" "+o.Labels["v"])
			case *corev1.ConfigMap:
				seen = append(seen, prefix+" typed "+o.Labels["v"])
			default:
				seen = append(seen, prefix+" other")
			}
		}}
	}
	setup := func(ctx context.Context, mgr manager.Manager) error {
		return builder.ControllerManagedBy(mgr).
			For(&appsv1.Deployment{}).
			Watches(&corev1.ConfigMap{}, record("meta"), builder.OnlyMetadata).
			Watches(&corev1.ConfigMap{}, record("full")).
			Complete(&probe{})
	}
	e := newMgrEnv(t, mgrScenario(setup))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: map[string]string{"v": "a"}}}
	e.must(e.user.Create(e.ctx, cm))
	e.deliverAll()
	cm.Labels["v"] = "b"
	e.must(e.user.Update(e.ctx, cm))
	e.deliverAll()
	slices.Sort(seen)
	if want := []string{"full typed b", "meta metadata ConfigMap b"}; !slices.Equal(seen, want) {
		t.Fatalf("handlers saw %q, want %q", seen, want)
	}
}

// A relist (a watch that expired with 410, or lost events) reaches a
// manager controller's handlers as client-go's Replace does: an update for
// an object that changed while the watch was gone, a delete for one that
// vanished (the missed deletion), an add for a new one, and nothing for an
// object that did not change (a same-revision Replaced is a sync, which
// the controller's 10 h resync period does not deliver).
func TestManagerRelistNotifiesEveryDifference(t *testing.T) {
	var seen []string
	setup := func(_ context.Context, mgr manager.Manager) error {
		return builder.ControllerManagedBy(mgr).
			For(&appsv1.Deployment{}).
			Watches(&corev1.ConfigMap{}, handler.Funcs{
				CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					seen = append(seen, "add "+e.Object.GetName())
				},
				UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					seen = append(seen, "update "+e.ObjectNew.GetName()+" "+e.ObjectOld.GetLabels()["v"]+"->"+e.ObjectNew.GetLabels()["v"])
				},
				DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					seen = append(seen, "delete "+e.Object.GetName())
				},
			}).
			Complete(&probe{})
	}
	cm := func(name, v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"v": v}}}
	}
	e := newMgrEnv(t, mgrScenario(setup, cm("changed", "1"), cm("gone", "1"), cm("same", "1")))
	e.deliverAll()
	if want := []string{"add changed", "add gone", "add same"}; !slices.Equal(seen, want) {
		t.Fatalf("initial list: handlers saw %v, want %v", seen, want)
	}
	seen = nil
	// While the informer's watch is gone, the store moves on: none of
	// these events is delivered before the relist.
	changed := cm("changed", "2")
	var current corev1.ConfigMap
	e.must(e.user.Get(e.ctx, client.ObjectKeyFromObject(changed), &current))
	changed.ResourceVersion = current.ResourceVersion
	e.must(e.user.Update(e.ctx, changed))
	e.must(e.user.Delete(e.ctx, cm("gone", "")))
	e.must(e.user.Create(e.ctx, cm("new", "1")))
	h := e.host()
	for _, inf := range h.informers {
		if inf.kind.gvk.Kind == "ConfigMap" {
			e.w.relist(h, inf, "watch expired (410): relisted")
		}
	}
	if want := []string{"update changed 1->2", "delete gone", "add new"}; !slices.Equal(seen, want) {
		t.Fatalf("relist: handlers saw %v, want %v", seen, want)
	}
}

// settledGoroutines waits (up to a second of real time: a controller's
// goroutine ends asynchronously once its context is cancelled) for the
// number of goroutines to drop to at most want, and returns the last count.
func settledGoroutines(want int) int {
	n := goruntime.NumGoroutine()
	for i := 0; i < 100 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = goruntime.NumGoroutine()
	}
	return n
}

// A world built and never run holds its Setup controllers' goroutines until
// Close; a world whose build fails after a Setup controller started
// releases it itself.
func TestWorldCloseReleasesSetupControllers(t *testing.T) {
	before := settledGoroutines(0)
	var worlds []*World
	for range 5 {
		p := &probe{}
		w, err := NewWorld(mgrScenario(p.setup(controller.Options{}, nil)), nil, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		worlds = append(worlds, w)
	}
	if n := goruntime.NumGoroutine(); n < before+5 {
		t.Fatalf("5 unrun worlds with a Setup controller: %d goroutines, %d before; the test needs each to hold one", n, before)
	}
	for _, w := range worlds {
		w.Close()
		w.Close() // twice: nothing more
	}
	if n := settledGoroutines(before); n > before {
		t.Errorf("after Close of 5 unrun worlds: %d goroutines, want %d as before", n, before)
	}

	// The second controller's Setup fails: the first's must stop.
	for range 5 {
		ok, bad := &probe{}, &probe{}
		sc := mgrScenario(ok.setup(controller.Options{}, nil))
		sc.Controllers = append(sc.Controllers, ControllerSpec{Name: "bad", For: &appsv1.Deployment{}, Setup: bad.setup(controller.Options{}, func(manager.Manager) error { return errors.New("boom") })})
		if _, err := NewWorld(sc, nil, RunOptions{}); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("NewWorld with a failing second Setup: err %v, want it to say boom", err)
		}
	}
	if n := settledGoroutines(before); n > before {
		t.Errorf("after 5 worlds whose second Setup failed: %d goroutines, want %d as before", n, before)
	}
}
