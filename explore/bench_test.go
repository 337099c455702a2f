package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// BenchmarkExplore measures, for every shipped scenario, the cost of one
// random schedule under the harness (sub-benchmark "harness": one schedule
// per op, with schedules/s and ns/step) and the cost of the same
// reconciles without it ("reconciler": the reconciles of 8 recorded
// schedules, replayed against a plain map client seeded with the objects
// the store held when each started, with ns/reconcile and the schedules/s
// the reconciles alone would allow; a reconciler built by Setup is built
// once per replayed schedule, untimed, with the map client as its
// manager's client). The ratio of the two is the harness overhead:
// everything but the reconciler's own code and the copies any client makes
// (the simulated apiserver and caches, scheduling, built-in actors, faults,
// state hashing, properties, history). "overhead" measures that ratio
// directly: each op runs one of the 8 recorded schedules under the harness
// and then replays its reconciles, timing each part, so both sides run
// the same schedules (the harness's step count is checked against the
// recording) and any drift of the machine's speed touches both alike. All
// three run under the collector settings of an exploration (tuneGC), the
// reconciler-only side too, so the ratio compares like with like.
//
//	go test -run '^$' -bench BenchmarkExplore -benchtime 200x ./explore/
func BenchmarkExplore(b *testing.B) {
	for _, sc := range targets.All() {
		name := strings.ReplaceAll(sc.Name, "/", "_")
		b.Run(name+"/harness", func(b *testing.B) {
			defer tuneGC()()
			schedules, steps := 0, 0
			for i := 0; i < b.N; i++ {
				rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 1, Seed: uint64(i), Workers: 1})
				if rep.Err != nil {
					b.Fatal(rep.Err)
				}
				schedules += rep.Schedules
				steps += rep.Steps
			}
			b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(steps)/float64(schedules), "steps/schedule")
		})
		b.Run(name+"/reconciler", func(b *testing.B) {
			defer tuneGC()()
			schedules := recordSchedules(b, sc, 8)
			for _, s := range schedules {
				s.check(b)
			}
			b.ResetTimer()
			n := 0
			// Seeding the map client and building the reconciler are
			// set-up, timed apart and left out of the metrics (ns/op
			// includes them): b.StopTimer would stop the world to read
			// memory statistics at every reconcile.
			var untimed time.Duration
			for i := 0; i < b.N; i++ {
				for _, s := range schedules {
					n += s.replay(b, func(f func()) { t := time.Now(); f(); untimed += time.Since(t) })
				}
			}
			spent := float64((b.Elapsed() - untimed).Nanoseconds())
			perSchedule := spent / float64(b.N) / float64(len(schedules))
			b.ReportMetric(spent/float64(n), "ns/reconcile")
			b.ReportMetric(1e9/perSchedule, "schedules/s")
		})
		b.Run(name+"/overhead", func(b *testing.B) {
			defer tuneGC()()
			schedules := recordSchedules(b, sc, 8)
			for _, s := range schedules {
				s.check(b)
			}
			b.ResetTimer()
			var harness, reconciler time.Duration
			for i := 0; i < b.N; i++ {
				s := schedules[i%len(schedules)]
				start := time.Now()
				rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 1, Seed: s.seed, Workers: 1})
				harness += time.Since(start)
				if rep.Err != nil || rep.Steps != s.steps {
					b.Fatalf("%s seed %d: the harness ran %d steps (error %v), the recorded schedule %d", sc.Name, s.seed, rep.Steps, rep.Err, s.steps)
				}
				var untimed time.Duration
				start = time.Now()
				s.replay(b, func(f func()) { t := time.Now(); f(); untimed += time.Since(t) })
				reconciler += time.Since(start) - untimed
			}
			b.ReportMetric(float64(harness.Nanoseconds())/float64(b.N)/1e6, "harness-ms/schedule")
			b.ReportMetric(float64(reconciler.Nanoseconds())/float64(b.N)/1e6, "reconciler-ms/schedule")
			b.ReportMetric(float64(harness)/float64(reconciler), "overhead-x")
		})
	}
}

// recordedReconcile is one reconcile of a recorded schedule: the request
// and the store's objects when it started.
type recordedReconcile struct {
	actor   model.Actor
	req     reconcile.Request
	objects kindObjects
	// finished: the reconcile returned in the run (a crash ends one
	// before it does; replayed here, it runs to its end).
	finished bool
}

// kindObjects holds objects by kind, then by "namespace/name".
type kindObjects map[string]map[string]client.Object

// recordedSchedule is the reconciles of one recorded schedule, in order.
type recordedSchedule struct {
	sc         *simulator.Scenario
	seed       uint64
	steps      int
	world      *simulator.World // the schedule's world, for external systems
	reconciles []recordedReconcile
}

// replay runs the schedule's reconciles against plain map clients, each
// seeded with the objects the store held when the reconcile started, and
// returns how many it ran; a reconcile that panics is counted in
// panicked. A reconciler built by New or NewWithEnv is built afresh for
// every reconcile, on a fresh client. One built by Setup is built once per
// replay against a manager whose client is the map client (the rest is a
// simulated world's manager, which only wires watches): its reconciles
// share it, as an incarnation's do, and the client is reseeded before
// each. Seeding and building run inside untimed.
func (s *recordedSchedule) replay(b testing.TB, untimed func(func())) int {
	spec := &s.sc.Controllers[0]
	if spec.Setup != nil {
		c := &mapClient{scheme: s.sc.Scheme}
		var rec reconcile.Reconciler
		untimed(func() { rec = setupReconciler(b, s.sc, c) })
		for i := range s.reconciles {
			r := &s.reconciles[i]
			untimed(func() { c.seed(r.objects) })
			s.run(rec, r)
		}
		return len(s.reconciles)
	}
	for i := range s.reconciles {
		r := &s.reconciles[i]
		var rec reconcile.Reconciler
		untimed(func() {
			c := &mapClient{scheme: s.sc.Scheme}
			c.seed(r.objects)
			if spec.New != nil {
				rec = spec.New(c)
			} else {
				rec = spec.NewWithEnv(&simulator.Env{Client: c, World: s.world, Actor: r.actor})
			}
		})
		s.run(rec, r)
	}
	return len(s.reconciles)
}

// panicked is the first panic of a replayed reconcile, for check.
var panicked any

func (s *recordedSchedule) run(rec reconcile.Reconciler, r *recordedReconcile) {
	defer func() {
		if p := recover(); p != nil && panicked == nil {
			panicked = fmt.Sprintf("%s, reconcile of %s: %v", s.sc.Name, r.req, p)
		}
	}()
	_, _ = rec.Reconcile(context.Background(), r.req)
}

// check replays the schedule once and fails the benchmark if a reconcile
// panicked: the shipped reconcilers do not panic under the harness, so a
// panic here is a call the map client does not serve (it embeds a nil
// client.Client), which would end the reconcile early and make the
// harness-free figure look cheaper than the reconciler is.
func (s *recordedSchedule) check(b testing.TB) {
	panicked = nil
	s.replay(b, func(f func()) { f() })
	if panicked != nil {
		b.Fatalf("a replayed reconcile panicked: %v", panicked)
	}
}

// recordSchedules runs schedules of sc (random, seeds 0..n-1) and returns
// their reconciles, each with the objects of the store when it started.
func recordSchedules(b testing.TB, sc *simulator.Scenario, n int) []*recordedSchedule {
	b.Helper()
	var out []*recordedSchedule
	for seed := range n {
		res, err := RunSchedule(sc, StrategyRandom, uint64(seed), nil)
		if err != nil {
			b.Fatal(err)
		}
		s := recordRun(sc, uint64(seed), res)
		if len(s.reconciles) == 0 {
			b.Fatalf("%s: no reconcile in schedule %d", sc.Name, seed)
		}
		out = append(out, s)
	}
	return out
}

// recordRun returns the reconciles of a run of sc, each with the objects
// the store held when it started (replayed from the run's history).
func recordRun(sc *simulator.Scenario, seed uint64, res *simulator.Result) *recordedSchedule {
	s := &recordedSchedule{sc: sc, seed: seed, steps: res.Steps, world: res.World}
	store := kindObjects{}
	running := map[model.Actor]int{} // the index of each controller's reconcile in flight
	for i := range res.History.Events {
		e := &res.History.Events[i]
		if e.Op == model.OpReconcileDone {
			if r, ok := running[e.Actor]; ok {
				s.reconciles[r].finished = true
				delete(running, e.Actor)
			}
		}
		switch {
		case e.Change == model.ChangeDeleted:
			delete(store[e.Kind], objKey(e.Namespace, e.Name))
		case e.Change != model.ChangeNone && e.Object != nil:
			if store[e.Kind] == nil {
				store[e.Kind] = map[string]client.Object{}
			}
			store[e.Kind][objKey(e.Namespace, e.Name)] = e.Object.(client.Object)
		case e.Op == model.OpReconcile && e.Actor.Group() == model.GroupController:
			snap := make(kindObjects, len(store))
			for k, v := range store {
				snap[k] = maps.Clone(v)
			}
			running[e.Actor] = len(s.reconciles)
			s.reconciles = append(s.reconciles, recordedReconcile{actor: e.Actor, req: reconcile.Request{NamespacedName: client.ObjectKey{Namespace: e.Namespace, Name: e.Name}}, objects: snap})
		}
	}
	return s
}

// setupReconciler runs the scenario's Setup (in a world that is built but
// never run) against a manager whose client, API reader and field indexer
// are c, and returns the reconciler of the controller Setup registered.
func setupReconciler(b testing.TB, sc *simulator.Scenario, c *mapClient) reconcile.Reconciler {
	mm := &mapManager{c: c}
	sc2 := *sc
	sc2.Controllers = slices.Clone(sc.Controllers)
	setup := sc.Controllers[0].Setup
	sc2.Controllers[0].Setup = func(ctx context.Context, mgr manager.Manager) error {
		mm.Manager = mgr
		return setup(ctx, mm)
	}
	w, err := simulator.NewWorld(&sc2, Random(0), simulator.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// The world only built the reconciler: release the controller
	// goroutine it started, or every replay would leave one behind, with
	// its world, and grow the heap the benchmark's collector works over.
	w.Close()
	if len(mm.added) != 1 {
		b.Fatalf("%s: Setup added %d runnables, want its one controller", sc.Name, len(mm.added))
	}
	// controller-runtime's controller keeps the reconciler in its
	// exported field Do.
	v := reflect.ValueOf(mm.added[0])
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	do := v.FieldByName("Do")
	if !do.IsValid() {
		b.Fatalf("%s: the controller Setup registered (%T) has no field Do", sc.Name, mm.added[0])
	}
	rec, ok := do.Interface().(reconcile.Reconciler)
	if !ok {
		b.Fatalf("%s: the controller's Do (%T) is not a reconcile.Reconciler", sc.Name, do.Interface())
	}
	return rec
}

// mapManager is a simulated world's manager with the map client in place
// of the world's client.
type mapManager struct {
	manager.Manager
	c     *mapClient
	added []manager.Runnable
}

func (m *mapManager) GetClient() client.Client             { return m.c }
func (m *mapManager) GetAPIReader() client.Reader          { return m.c }
func (m *mapManager) GetFieldIndexer() client.FieldIndexer { return m.c }

// The map side's event recorders format each event's message, the part a
// recorder's caller pays for, and drop it: the simulated manager's would
// record it in the history of the world Setup ran in, harness work that
// would flatter the ratio.
func (m *mapManager) GetEventRecorderFor(string) record.EventRecorder { return discardEvents{} }
func (m *mapManager) GetEventRecorder(string) recorder.EventRecorder  { return discardNewEvents{} }

// discardEvents and discardNewEvents are the two flavours of event
// recorder (core/v1 and events.k8s.io); messageSink keeps the formatting
// from being optimised away.
type (
	discardEvents    struct{}
	discardNewEvents struct{}
)

var messageSink int

func (discardEvents) Event(_ runtime.Object, _, _, message string) { messageSink += len(message) }
func (discardEvents) Eventf(_ runtime.Object, _, _, format string, args ...any) {
	messageSink += len(fmt.Sprintf(format, args...))
}
func (discardEvents) AnnotatedEventf(_ runtime.Object, _ map[string]string, _, _, format string, args ...any) {
	messageSink += len(fmt.Sprintf(format, args...))
}
func (discardNewEvents) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	messageSink += len(fmt.Sprintf(note, args...))
}
func (discardNewEvents) AnnotatedEventf(_, _ runtime.Object, _ map[string]string, _, _, _, note string, args ...any) {
	messageSink += len(fmt.Sprintf(note, args...))
}
func (m *mapManager) Add(r manager.Runnable) error {
	m.added = append(m.added, r)
	return m.Manager.Add(r)
}

func objKey(namespace, name string) string { return namespace + "/" + name }

// mapClient is the least a reconciler needs, written to cost no more than
// a reconciler's own reads and writes must: typed objects in one map per
// kind, copied once on every read and write (as any client copies: a
// typed DeepCopyInto straight into the caller's object or list item),
// resourceVersions counted, label selectors, namespaces and indexed
// fields honoured, merge and JSON patches applied; no validation, no
// conflicts, no caches, no events, no history. Methods the shipped
// reconcilers do not call are left to the embedded nil interface (check
// fails the benchmark if one is called). The cheaper this client, the
// higher (the more honest) the overhead ratio: a client that copied twice
// or scanned every kind on a List would flatter the harness.
type mapClient struct {
	client.Client
	scheme   *runtime.Scheme
	objs     kindObjects
	rev      int
	names    int                                      // names given to GenerateName creates
	indexers map[string]map[string]client.IndexerFunc // kind -> field -> extract
}

// seed replaces the client's objects with objs (shared: the client copies
// on every read and replaces, never modifies, what it stores).
func (c *mapClient) seed(objs kindObjects) {
	c.objs = make(kindObjects, len(objs))
	for k, v := range objs {
		c.objs[k] = maps.Clone(v)
	}
}

func (c *mapClient) kind(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

func (c *mapClient) key(obj client.Object) (string, schema.GroupVersionKind, error) {
	gvk, err := c.kind(obj)
	return objKey(obj.GetNamespace(), obj.GetName()), gvk, err
}

// copyInto copies src into dst, of the same type, with the type's own
// DeepCopyInto. It falls back on DeepCopyObject and a reflective store
// (two copies) for a type mapCopiers lacks; TestMapClientCopiesOnce
// requires every type the shipped scenarios store to be there.
func copyInto(dst, src runtime.Object) {
	if cp, ok := mapCopiers[reflect.TypeOf(src)]; ok {
		cp(dst, src)
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}

// mapCopiers holds a typed copy for each type the shipped scenarios store.
var mapCopiers = map[reflect.Type]func(dst, src runtime.Object){}

func init() {
	registerCopier[corev1.Pod]()
	registerCopier[corev1.Service]()
	registerCopier[corev1.PersistentVolumeClaim]()
	registerCopier[corev1.ConfigMap]()
	registerCopier[corev1.Secret]()
	registerCopier[corev1.ServiceAccount]()
	registerCopier[corev1.Endpoints]()
	registerCopier[appsv1.StatefulSet]()
	registerCopier[appsv1.Deployment]()
	registerCopier[policyv1.PodDisruptionBudget]()
	registerCopier[batchv1.Job]()
	registerCopier[rbacv1.Role]()
	registerCopier[rbacv1.RoleBinding]()
	registerCopier[zookeeper.ZookeeperCluster]()
	registerCopier[casskop.CassandraCluster]()
	registerCopier[rayv1.RayCluster]()
}

func registerCopier[T any, PT interface {
	*T
	runtime.Object
	DeepCopyInto(*T)
}]() {
	mapCopiers[reflect.TypeFor[PT]()] = func(dst, src runtime.Object) { src.(PT).DeepCopyInto((*T)(dst.(PT))) }
}

func (c *mapClient) Scheme() *runtime.Scheme { return c.scheme }

// IndexField implements client.FieldIndexer: Lists with MatchingFields on
// the field match what extract returns.
func (c *mapClient) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	if c.indexers == nil {
		c.indexers = map[string]map[string]client.IndexerFunc{}
	}
	if c.indexers[gvk.Kind] == nil {
		c.indexers[gvk.Kind] = map[string]client.IndexerFunc{}
	}
	c.indexers[gvk.Kind][field] = extract
	return nil
}

func (c *mapClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	o, ok := c.objs[gvk.Kind][objKey(key.Namespace, key.Name)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	copyInto(obj, o)
	return nil
}

// matching returns the keys of the objects of kind that match o, sorted
// (an apiserver lists in key order).
func (c *mapClient) matching(kind string, o *client.ListOptions) ([]string, error) {
	objs := c.objs[kind]
	keys := make([]string, 0, len(objs))
	for k, obj := range objs {
		if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
			continue
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if o.FieldSelector != nil {
			ok := true
			for _, r := range o.FieldSelector.Requirements() {
				extract := c.indexers[kind][r.Field]
				if extract == nil {
					return nil, fmt.Errorf("mapClient: no index for field %q of %s", r.Field, kind)
				}
				ok = ok && slices.Contains(extract(obj), r.Value)
			}
			if !ok {
				continue
			}
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

func (c *mapClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := c.kind(list)
	if err != nil {
		return err
	}
	kind := strings.TrimSuffix(gvk.Kind, "List")
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	keys, err := c.matching(kind, o)
	if err != nil {
		return err
	}
	// Copy each object straight into its item of the typed list.
	field := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !field.IsValid() || field.Kind() != reflect.Slice {
		return fmt.Errorf("mapClient: %T has no Items slice", list)
	}
	items := reflect.MakeSlice(field.Type(), len(keys), len(keys))
	for i, k := range keys {
		copyInto(items.Index(i).Addr().Interface().(runtime.Object), c.objs[kind][k])
	}
	field.Set(items)
	return nil
}

func (c *mapClient) write(obj client.Object, create bool) error {
	if create && obj.GetName() == "" && obj.GetGenerateName() != "" {
		c.names++
		obj.SetName(obj.GetGenerateName() + strconv.Itoa(c.names))
	}
	key, gvk, err := c.key(obj)
	if err != nil {
		return err
	}
	_, exists := c.objs[gvk.Kind][key]
	switch {
	case create && exists:
		return apierrors.NewAlreadyExists(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	case !create && !exists:
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}
	c.rev++
	obj.SetResourceVersion(strconv.Itoa(c.rev))
	if create && obj.GetUID() == "" {
		obj.SetUID(types.UID("uid-" + strconv.Itoa(c.rev)))
	}
	if c.objs[gvk.Kind] == nil {
		c.objs[gvk.Kind] = map[string]client.Object{}
	}
	stored := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	copyInto(stored, obj)
	c.objs[gvk.Kind][key] = stored
	return nil
}

func (c *mapClient) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	return c.write(obj, true)
}

func (c *mapClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	return c.write(obj, false)
}

// Patch applies a merge or JSON patch to the stored object (a
// resourceVersion in a merge patch must match, as with
// MergeFromWithOptimisticLock) and stores the result into obj.
func (c *mapClient) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	key, gvk, err := c.key(obj)
	if err != nil {
		return err
	}
	cur, ok := c.objs[gvk.Kind][key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	var out []byte
	switch patch.Type() {
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(curJSON, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			out, err = p.Apply(curJSON)
		}
	default:
		return fmt.Errorf("mapClient: patch type %q not supported", patch.Type())
	}
	if err != nil {
		return err
	}
	patched := reflect.New(reflect.TypeOf(cur).Elem()).Interface().(client.Object)
	if err := json.Unmarshal(out, patched); err != nil {
		return err
	}
	if rv := patched.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName(), fmt.Errorf("resourceVersion %s, stored %s", rv, cur.GetResourceVersion()))
	}
	if err := c.write(patched, false); err != nil {
		return err
	}
	// patched is the caller's now: write stored a copy of it.
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(patched).Elem())
	return nil
}

func (c *mapClient) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	key, gvk, err := c.key(obj)
	if err != nil {
		return err
	}
	if _, ok := c.objs[gvk.Kind][key]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}
	delete(c.objs[gvk.Kind], key)
	return nil
}

// DeleteAllOf deletes the objects of obj's kind that match the options'
// namespace and selectors.
func (c *mapClient) DeleteAllOf(_ context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	o := &client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	keys, err := c.matching(gvk.Kind, &o.ListOptions)
	if err != nil {
		return err
	}
	for _, k := range keys {
		delete(c.objs[gvk.Kind], k)
	}
	return nil
}

func (c *mapClient) Status() client.SubResourceWriter { return mapStatus{c} }

type mapStatus struct{ c *mapClient }

func (s mapStatus) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return fmt.Errorf("mapClient: status create not supported")
}

func (s mapStatus) Update(_ context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	return s.c.write(obj, false)
}

func (s mapStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	return s.c.Patch(ctx, obj, patch)
}

func (s mapStatus) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return fmt.Errorf("mapClient: status apply not supported")
}

// BenchmarkSyncWallClock measures what Scenario.SyncWallClock costs the
// KubeRay scenarios, whose unmodified reconciler reads time.Now: each op
// runs one random schedule (seeds 0-7 in turn) in a testing/synctest
// bubble of its own that sleeps at every tick, as the scenario does, and
// then the same seed without it (the real clock, which barely moves, so
// KubeRay's wall-clock timeouts never expire and the schedule may differ:
// a cost figure, not a verdict), timing each, so that a drift of the
// machine's speed touches both alike. It reports both times, their ratio,
// the ticks a schedule takes and how many of them a later sleep could
// absorb (a tick followed by another before any controller or workload
// step, the only steps that could read the wall clock in between).
//
//	go test -run '^$' -bench 'BenchmarkSyncWallClock' -benchtime 800x ./explore/
func BenchmarkSyncWallClock(b *testing.B) {
	for _, name := range []string{"kuberay/lifecycle", "kuberay/scale"} {
		sc, err := targets.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		if !sc.SyncWallClock {
			b.Fatalf("%s: SyncWallClock is off, nothing to measure", name)
		}
		none := *sc
		none.SyncWallClock = false
		b.Run(strings.ReplaceAll(name, "/", "_"), func(b *testing.B) {
			ticks, absorbable := 0, 0
			for seed := range uint64(8) {
				t, a := tickCounts(b, sc, seed)
				ticks, absorbable = ticks+t, absorbable+a
			}
			b.ResetTimer()
			var bubble, real time.Duration
			for i := 0; i < b.N; i++ {
				seed := uint64(i % 8)
				for _, v := range []struct {
					sc    *simulator.Scenario
					spent *time.Duration
				}{{sc, &bubble}, {&none, &real}} {
					start := time.Now()
					rep := Explore(v.sc, Options{Strategy: StrategyRandom, Schedules: 1, Seed: seed, Workers: 1})
					*v.spent += time.Since(start)
					if rep.Err != nil {
						b.Fatal(rep.Err)
					}
				}
			}
			b.ReportMetric(float64(bubble.Nanoseconds())/float64(b.N)/1e6, "bubble-ms/schedule")
			b.ReportMetric(float64(real.Nanoseconds())/float64(b.N)/1e6, "none-ms/schedule")
			b.ReportMetric(float64(bubble)/float64(real), "bubble-x")
			b.ReportMetric(float64(ticks)/8, "ticks/schedule")
			b.ReportMetric(float64(absorbable)/8, "absorbable-ticks/schedule")
		})
	}
}

// tickCounts runs one random schedule and counts its ticks, and those
// followed by another tick before any controller or workload step.
func tickCounts(b testing.TB, sc *simulator.Scenario, seed uint64) (ticks, absorbable int) {
	res, err := RunSchedule(sc, StrategyRandom, seed, nil)
	if err != nil {
		b.Fatal(err)
	}
	pending := false
	for _, e := range res.History.Events {
		switch {
		case e.Op == model.OpTick:
			if pending {
				absorbable++
			}
			ticks++
			pending = true
		case e.Actor.IsController() || e.Actor.Group() == model.GroupUser:
			pending = false
		}
	}
	return ticks, absorbable
}

// BenchmarkExhaustiveOverhead is BenchmarkExplore's overhead ratio for the
// exhaustive search: the CPU the search spends per reconcile it runs
// (everything included: the simulated cluster, the search's bookkeeping,
// fingerprints, checkpoints, resuming, properties) against what one of
// its reconciles costs alone, against the map client. Each op runs the
// search on one worker as Explore does (resuming schedules from
// checkpoints) and replaying every schedule from the start (NoResume),
// and replays against the map client the reconciles that finished in
// every 8th schedule of the second search, recorded once before the
// timer starts (with NoResume a schedule's history is exactly what it
// ran). A reconcile a crash cut short counts as one in the search's
// figure and is left out of the sample (it would run to its end there):
// crashed-% is their share of the sample's reconciles, the most by which
// the search's us/reconcile can understate its cost.
//
//	go test -run '^$' -bench BenchmarkExhaustiveOverhead -benchtime 3x ./explore/
func BenchmarkExhaustiveOverhead(b *testing.B) {
	for _, c := range exhaustiveBenchCases {
		b.Run(c.benchName(), func(b *testing.B) {
			defer tuneGC()()
			sc := lookup(b, c.name)
			var sample []*recordedSchedule
			started := 0
			rep := Explore(sc, Options{Faults: &c.faults, Workers: 1, NoResume: true, Visit: func(i int, _ uint64, res *simulator.Result) {
				if i%8 != 0 {
					return
				}
				s := recordRun(sc, uint64(i), res)
				started += len(s.reconciles)
				s.reconciles = slices.DeleteFunc(s.reconciles, func(r recordedReconcile) bool { return !r.finished })
				if len(s.reconciles) > 0 {
					sample = append(sample, s)
				}
			}})
			if rep.Err != nil || rep.Verdict != VerdictVerified {
				b.Fatalf("%s with %s: %s (error %v): the benchmark measures a verifying search", c.name, &c.faults, rep.Verdict, rep.Err)
			}
			finished := 0
			for _, s := range sample {
				s.check(b)
				finished += len(s.reconciles)
			}
			b.ResetTimer()
			var resumeTime, replayTime, mapTime time.Duration
			resumeReconciles, replayReconciles := 0, 0
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := Explore(sc, Options{Faults: &c.faults, Workers: 1})
				resumeTime += time.Since(start)
				resumeReconciles += r.Reconciles
				start = time.Now()
				r = Explore(sc, Options{Faults: &c.faults, Workers: 1, NoResume: true})
				replayTime += time.Since(start)
				replayReconciles += r.Reconciles
				var untimed time.Duration
				start = time.Now()
				for _, s := range sample {
					s.replay(b, func(f func()) { t := time.Now(); f(); untimed += time.Since(t) })
				}
				mapTime += time.Since(start) - untimed
			}
			perReconcile := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) / 1e3 }
			alone := perReconcile(mapTime, finished*b.N)
			b.ReportMetric(perReconcile(resumeTime, resumeReconciles), "search-us/reconcile")
			b.ReportMetric(perReconcile(replayTime, replayReconciles), "no-resume-us/reconcile")
			b.ReportMetric(alone, "reconciler-us/reconcile")
			b.ReportMetric(perReconcile(resumeTime, resumeReconciles)/alone, "overhead-x")
			b.ReportMetric(100*float64(started-finished)/float64(started), "crashed-%")
		})
	}
}

// exhaustiveBenchCase is a search BenchmarkExhaustiveOverhead and
// BenchmarkExhaustiveSearch run: small enough for a few seconds an op,
// with faults that make its schedules resume from checkpoints.
type exhaustiveBenchCase struct {
	name   string
	faults model.FaultBudget
}

var exhaustiveBenchCases = []exhaustiveBenchCase{
	{"zookeeper/fixed", model.FaultBudget{Crashes: 1, Stale: 1}},
	{"casskop/fixed", model.FaultBudget{Crashes: 2}},
}

func (c exhaustiveBenchCase) benchName() string {
	return fmt.Sprintf("%s/%s", strings.ReplaceAll(c.name, "/", "_"), strings.ReplaceAll(c.faults.String(), " ", ","))
}

// BenchmarkExhaustiveSearch times the searches of BenchmarkExhaustiveOverhead
// alone (one worker, resuming from checkpoints, as Explore runs them), for
// comparing two versions of the harness: an op is one search, and
// us/reconcile its time per reconcile it ran.
//
//	go test -run '^$' -bench BenchmarkExhaustiveSearch -benchtime 40x ./explore/
func BenchmarkExhaustiveSearch(b *testing.B) {
	for _, c := range exhaustiveBenchCases {
		b.Run(c.benchName(), func(b *testing.B) {
			defer tuneGC()()
			sc := lookup(b, c.name)
			reconciles, schedules := 0, 0
			for i := 0; i < b.N; i++ {
				r := Explore(sc, Options{Faults: &c.faults, Workers: 1})
				if r.Err != nil || r.Verdict != VerdictVerified {
					b.Fatalf("%s with %s: %s (error %v): the benchmark measures a verifying search", c.name, &c.faults, r.Verdict, r.Err)
				}
				reconciles += r.Reconciles
				schedules += r.Schedules
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reconciles)/1e3, "us/reconcile")
			b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
		})
	}
}
