package simulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/opcheck/opcheck/model"
)

// Manager is controller-runtime's manager.Manager over one controller
// incarnation in the simulated cluster. A ControllerSpec's Setup gets one,
// so that an operator's own NewReconciler and SetupWithManager run
// unmodified: ctrl.NewControllerManagedBy(mgr) builds the real
// controller-runtime controller, with its real predicates and event
// handlers; opcheck then takes the controller's event sources and its
// reconciler and drives them itself:
//
//   - GetClient is the controller's client: reads from its informers,
//     writes to the store, one scheduling step per call.
//   - GetCache serves the same informers, with the field indexes IndexField
//     registered (MatchingFields on an indexed field, exact match only, as
//     controller-runtime's cache).
//   - GetAPIReader reads from the apiserver the controller is connected to,
//     never from its informers; that apiserver's watch cache may be stale
//     under a stale fault.
//   - GetEventRecorderFor / GetEventRecorder record every event in the
//     history (op RecordEvent) instead of writing Event objects.
//   - GetControllerOptions makes the builder's controller skip the global
//     name check (every crash builds it again) and start its sources
//     without workers (warmup); opcheck's work queue replaces the
//     controller's, on the logical clock.
//
// Refused loudly, at world build: runnables other than one controller,
// MaxConcurrentReconciles above 1, a ReconciliationTimeout, mgr.Start.
type Manager struct {
	host      *Host
	ctx       context.Context
	cache     *managerCache
	apiReader *Client
	runnables []manager.Runnable
}

var _ manager.Manager = (*Manager)(nil)

// Add implements manager.Manager: the builder adds its controller here.
func (m *Manager) Add(r manager.Runnable) error {
	m.runnables = append(m.runnables, r)
	return nil
}

// Elected implements manager.Manager: the one incarnation is always leader.
func (m *Manager) Elected() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// AddMetricsServerExtraHandler implements manager.Manager; there is no
// metrics server.
func (m *Manager) AddMetricsServerExtraHandler(string, http.Handler) error { return nil }

// AddHealthzCheck implements manager.Manager; health checks are not run.
func (m *Manager) AddHealthzCheck(string, healthz.Checker) error { return nil }

// AddReadyzCheck implements manager.Manager; readiness checks are not run.
func (m *Manager) AddReadyzCheck(string, healthz.Checker) error { return nil }

// Start implements manager.Manager; opcheck drives the controller itself.
func (m *Manager) Start(context.Context) error {
	return errors.New("opcheck: a ControllerSpec's Setup must not call mgr.Start: opcheck runs the controller it registers, one step at a time")
}

// GetWebhookServer implements manager.Manager: a server that is never started.
func (m *Manager) GetWebhookServer() webhook.Server { return webhook.NewServer(webhook.Options{}) }

// GetLogger implements manager.Manager.
func (m *Manager) GetLogger() logr.Logger { return logr.Discard() }

// GetControllerOptions implements manager.Manager.
func (m *Manager) GetControllerOptions() config.Controller {
	yes, no := true, false
	return config.Controller{SkipNameValidation: &yes, EnableWarmup: &yes, UsePriorityQueue: &no, Logger: logr.Discard()}
}

// GetConverterRegistry implements manager.Manager.
func (m *Manager) GetConverterRegistry() conversion.Registry { return conversion.NewRegistry() }

// GetHTTPClient implements cluster.Cluster: a client whose every request
// fails, since the simulated cluster has no HTTP endpoint.
func (m *Manager) GetHTTPClient() *http.Client { return &http.Client{Transport: noHTTP{}} }

type noHTTP struct{}

func (noHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("opcheck: the simulated cluster has no HTTP endpoint (request to %s); use mgr.GetClient()", req.URL)
}

// GetConfig implements cluster.Cluster: a config naming no real server.
func (m *Manager) GetConfig() *rest.Config { return &rest.Config{Host: "https://opcheck.invalid"} }

// GetCache implements cluster.Cluster.
func (m *Manager) GetCache() cache.Cache { return m.cache }

// GetScheme implements cluster.Cluster.
func (m *Manager) GetScheme() *runtime.Scheme { return m.host.cluster.Store.kinds.scheme }

// GetClient implements cluster.Cluster.
func (m *Manager) GetClient() client.Client { return m.host.client }

// GetFieldIndexer implements cluster.Cluster.
func (m *Manager) GetFieldIndexer() client.FieldIndexer { return m.cache }

// GetRESTMapper implements cluster.Cluster.
func (m *Manager) GetRESTMapper() meta.RESTMapper { return m.host.client.RESTMapper() }

// GetAPIReader implements cluster.Cluster.
func (m *Manager) GetAPIReader() client.Reader { return m.apiReader }

// GetEventRecorderFor implements recorder.Provider.
func (m *Manager) GetEventRecorderFor(name string) record.EventRecorder {
	return &eventRecorder{host: m.host, source: name}
}

// GetEventRecorder implements recorder.Provider (the events.k8s.io API).
func (m *Manager) GetEventRecorder(name string) recorder.EventRecorder {
	return &eventsRecorder{eventRecorder{host: m.host, source: name}}
}

// eventRecorder records Kubernetes events in the history. Recording is not
// a scheduling step and writes nothing to the store: the real recorder
// sends events asynchronously, best effort, and no controller reads them.
type eventRecorder struct {
	host   *Host
	source string // the component name, shown in the history
}

var (
	_ record.EventRecorder   = (*eventRecorder)(nil)
	_ recorder.EventRecorder = (*eventsRecorder)(nil)
)

func (r *eventRecorder) emit(regarding runtime.Object, eventtype, reason, message string) {
	w := r.host.cluster
	e := model.Event{Actor: r.host.actor, Op: model.OpRecordEvent, HeadRev: w.Store.rev, Server: r.host.server.ID,
		Detail: r.source + ": " + eventtype + " " + reason + ": " + message}
	if obj, ok := regarding.(client.Object); ok {
		e.Namespace, e.Name = obj.GetNamespace(), obj.GetName()
		if k, err := w.Store.kinds.forObject(obj); err == nil {
			e.Kind = k.gvk.Kind
		}
	}
	w.Record(e)
}

func (r *eventRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.emit(object, eventtype, reason, message)
}

func (r *eventRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.emit(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *eventRecorder) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.emit(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// eventsRecorder is the events.k8s.io flavour: Eventf has another
// signature there, so it is a type of its own.
type eventsRecorder struct{ r eventRecorder }

func (r *eventsRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	r.r.emit(regarding, eventtype, reason, action+": "+fmt.Sprintf(note, args...))
}

func (r *eventsRecorder) AnnotatedEventf(regarding, _ runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...interface{}) {
	r.r.emit(regarding, eventtype, reason, action+": "+fmt.Sprintf(note, args...))
}

// managerCache is controller-runtime's cache.Cache over the host's
// informers.
type managerCache struct {
	m *Manager
	// mu serialises GetInformer: the controller's warmup starts its sources
	// on goroutines of their own.
	mu sync.Mutex
	// handles are the informers handed out, by GVK and projection; during warmup they
	// collect handlers and are bound to the host's informers afterwards,
	// in GVK order, so that the world does not depend on goroutine order.
	handles  map[handleKey]*informerHandle
	warm     bool
	indexers map[*kindInfo]map[string]client.IndexerFunc
}

var _ cache.Cache = (*managerCache)(nil)

func (c *managerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.m.host.client.Get(ctx, key, obj, opts...)
}

func (c *managerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.m.host.client.List(ctx, list, opts...)
}

func (c *managerCache) GetInformer(ctx context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	gvk, err := apiutil.GVKForObject(obj, c.m.GetScheme())
	if err != nil {
		return nil, err
	}
	_, metadataOnly := obj.(*metav1.PartialObjectMetadata)
	return c.informerFor(handleKey{gvk: gvk, metadataOnly: metadataOnly})
}

func (c *managerCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return c.informerFor(handleKey{gvk: gvk})
}

// handleKey names an informer handed out: its kind, and whether it was
// asked for as metadata only (a PartialObjectMetadata watch, e.g.
// builder.OnlyMetadata), whose handlers see PartialObjectMetadata objects.
type handleKey struct {
	gvk          schema.GroupVersionKind
	metadataOnly bool
}

func (k handleKey) String() string {
	if k.metadataOnly {
		return k.gvk.String() + " (metadata)"
	}
	return k.gvk.String()
}

func (c *managerCache) informerFor(key handleKey) (cache.Informer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gvk := key.gvk
	if !c.m.GetScheme().Recognizes(gvk) {
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	hd := c.handles[key]
	if hd == nil {
		hd = &informerHandle{cache: c, gvk: gvk, metadataOnly: key.metadataOnly}
		c.handles[key] = hd
		if c.warm {
			c.bind(hd)
		}
	}
	return hd, nil
}

// bind attaches a handle to the host's informer of its kind.
func (c *managerCache) bind(hd *informerHandle) {
	k, err := c.m.host.cluster.Store.kinds.forGVK(hd.gvk)
	if err != nil {
		panic(err)
	}
	hd.inf = c.m.host.watch(k)
	c.m.host.managed.byKind[k] = append(c.m.host.managed.byKind[k], hd)
}

func (c *managerCache) RemoveInformer(context.Context, client.Object) error {
	return errors.New("opcheck: RemoveInformer is not modelled: informers live as long as the controller incarnation")
}

func (c *managerCache) Start(context.Context) error { return nil }

func (c *managerCache) WaitForCacheSync(context.Context) bool { return true }

// IndexField implements client.FieldIndexer: the index serves cached
// Lists with MatchingFields on that field.
func (c *managerCache) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	k, err := c.m.host.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if c.indexers[k] == nil {
		c.indexers[k] = map[string]client.IndexerFunc{}
	}
	if _, dup := c.indexers[k][field]; dup {
		return fmt.Errorf("indexer conflict: field %q of %s is indexed twice", field, k.gvk.Kind)
	}
	c.indexers[k][field] = extract
	return nil
}

// informerHandle is the cache.Informer controller-runtime's sources
// register their event handlers with.
type informerHandle struct {
	cache        *managerCache
	gvk          schema.GroupVersionKind
	metadataOnly bool
	inf          *informer
	handlers     []toolscache.ResourceEventHandler
}

// view is what the handle's handlers get for a stored object: the object
// itself, as a client-go shared informer hands its handlers the cached
// object (controller-runtime's event handlers and predicates only read
// it, and its documentation asks the same of user-written ones), or for a
// metadata-only handle its PartialObjectMetadata. The object is a stored
// revision, which nothing may modify: TestBuiltinStepMemosMatchFreshSteps
// and TestSharedUntilReads check, over the kuberay scenarios' real
// handlers, that none changes. (A deep copy here was 6% of the CPU of a
// kuberay/lifecycle schedule.)
func (hd *informerHandle) view(obj client.Object) interface{} {
	if !hd.metadataOnly {
		return obj
	}
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(hd.gvk)
	fillMetadata(pm, obj)
	return pm
}

var _ cache.Informer = (*informerHandle)(nil)

func (hd *informerHandle) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return hd.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

func (hd *informerHandle) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return hd.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

// AddEventHandlerWithOptions registers h. As a shared informer does, a
// handler added after the informer has synced receives the current
// objects as adds (in key order).
func (hd *informerHandle) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if hd.cache.m.host.managed.warmingUp {
		hd.cache.mu.Lock()
		defer hd.cache.mu.Unlock()
	}
	hd.handlers = append(hd.handlers, h)
	if hd.inf != nil {
		mc := hd.cache.m.host.managed
		for _, obj := range hd.inf.list() {
			h.OnAdd(hd.view(obj), false)
		}
		mc.flush()
	}
	return syncedRegistration{}, nil
}

func (hd *informerHandle) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	return errors.New("opcheck: RemoveEventHandler is not modelled")
}

func (hd *informerHandle) AddIndexers(toolscache.Indexers) error {
	return errors.New("opcheck: AddIndexers on an informer is not modelled; use mgr.GetFieldIndexer().IndexField")
}

func (hd *informerHandle) HasSynced() bool { return true }

func (hd *informerHandle) HasSyncedChecker() toolscache.DoneChecker { return syncedRegistration{} }

func (hd *informerHandle) IsStopped() bool { return false }

type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool                          { return true }
func (syncedRegistration) HasSyncedChecker() toolscache.DoneChecker { return syncedRegistration{} }
func (syncedRegistration) Name() string                             { return "opcheck-informer" }
func (syncedRegistration) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// managedController is the part of a Host that runs a controller built by
// controller-runtime's builder against a Manager.
type managedController struct {
	mgr       *Manager
	cancel    context.CancelFunc
	queue     *queueAdapter
	byKind    map[*kindInfo][]*informerHandle
	warmingUp bool
	// pending collects the requests handlers add during one delivery; they
	// are queued sorted, since client-go runs each handler on a goroutine
	// of its own and gives them no order.
	pending []reconcile.Request
}

// flush queues the requests the handlers added, in key order.
func (mc *managedController) flush() {
	if len(mc.pending) == 0 {
		return
	}
	slices.SortFunc(mc.pending, func(a, b reconcile.Request) int { return strings.Compare(a.String(), b.String()) })
	for _, r := range mc.pending {
		mc.queue.host.queue.Add(r)
	}
	mc.pending = mc.pending[:0]
}

// dispatch hands one watch event to the handlers of its kind.
func (mc *managedController) dispatch(k *kindInfo, old, obj client.Object, deleted bool) {
	for _, hd := range mc.byKind[k] {
		for _, h := range hd.handlers {
			switch {
			case deleted:
				h.OnDelete(hd.view(obj))
			case old == nil:
				h.OnAdd(hd.view(obj), false)
			default:
				h.OnUpdate(hd.view(old), hd.view(obj))
			}
		}
	}
	mc.flush()
}

// queueAdapter is the work queue the real controller's sources enqueue
// into: it forwards to the host's work queue on the logical clock. Its Get
// is never called (opcheck starts no workers) and blocks until shutdown.
type queueAdapter struct {
	host *Host
	done chan struct{}
	once sync.Once
}

var _ workqueue.TypedRateLimitingInterface[reconcile.Request] = (*queueAdapter)(nil)

func (q *queueAdapter) Add(r reconcile.Request) {
	mc := q.host.managed
	mc.pending = append(mc.pending, r)
}

func (q *queueAdapter) Len() int { return q.host.queue.Len() }

func (q *queueAdapter) Get() (reconcile.Request, bool) {
	<-q.done
	return reconcile.Request{}, true
}

func (q *queueAdapter) Done(reconcile.Request) {}

func (q *queueAdapter) ShutDown() { q.once.Do(func() { close(q.done) }) }

func (q *queueAdapter) ShutDownWithDrain() { q.ShutDown() }

func (q *queueAdapter) ShuttingDown() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

func (q *queueAdapter) AddAfter(r reconcile.Request, d time.Duration) {
	w := q.host.cluster
	q.host.queue.AddAfter(r, w.Clock.Now()+model.FromDuration(d))
}

func (q *queueAdapter) AddRateLimited(r reconcile.Request) {
	w := q.host.cluster
	q.host.queue.AddAfter(r, w.Clock.Now()+q.host.queue.backoff(r))
}

func (q *queueAdapter) Forget(r reconcile.Request) { q.host.queue.Forget(r) }

func (q *queueAdapter) NumRequeues(r reconcile.Request) int { return q.host.queue.failures[r] }

// warmable is the part of controller-runtime's internal controller that
// starts its event sources without starting workers.
type warmable interface {
	Warmup(ctx context.Context) error
}

// startManaged builds the controller of a ControllerSpec with Setup: it
// runs Setup against a fresh Manager, takes the controller the builder
// added, points its queue at the host's and starts its sources.
func (h *Host) startManaged() {
	w := h.cluster
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{host: h, ctx: ctx}
	m.cache = &managerCache{m: m, handles: map[handleKey]*informerHandle{}, indexers: map[*kindInfo]map[string]client.IndexerFunc{}}
	m.apiReader = &Client{cluster: w, server: h.server, actor: h.actor, reads: serverReads{server: h.server}, gate: h.gate, memory: h.memory}
	mc := &managedController{mgr: m, cancel: cancel, byKind: map[*kindInfo][]*informerHandle{}}
	mc.queue = &queueAdapter{host: h, done: make(chan struct{})}
	h.managed = mc
	fail := func(format string, args ...any) {
		cancel()
		panic(fmt.Sprintf("controller %q: "+format, append([]any{h.spec.name}, args...)...))
	}
	if err := h.spec.setup(ctx, m); err != nil {
		fail("Setup: %v", err)
	}
	var ctrl manager.Runnable
	for _, r := range m.runnables {
		if _, ok := r.(warmable); !ok {
			fail("Setup added a runnable of type %T to the manager; opcheck runs only controllers built with ctrl.NewControllerManagedBy (or controller.New)", r)
		}
		if ctrl != nil {
			fail("Setup registered more than one controller; give each its own ControllerSpec")
		}
		ctrl = r
	}
	if ctrl == nil {
		fail("Setup registered no controller with the manager (call SetupWithManager, or ctrl.NewControllerManagedBy(mgr)...Complete)")
	}
	rec, err := takeController(ctrl, mc.queue)
	if err != nil {
		fail("%v", err)
	}
	h.reconciler = rec
	mc.warmingUp = true
	err = ctrl.(warmable).Warmup(ctx)
	mc.warmingUp = false
	if err != nil {
		fail("starting the controller's event sources: %v", err)
	}
	// Bind the informers the sources asked for, in GVK order, and hand each
	// handler the initial list.
	keys := make([]handleKey, 0, len(m.cache.handles))
	for key := range m.cache.handles {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b handleKey) int { return strings.Compare(a.String(), b.String()) })
	m.cache.warm = true
	for _, key := range keys {
		m.cache.bind(m.cache.handles[key])
	}
	if _, ok := mc.byKind[h.primary]; !ok {
		fail("its spec names For %s, but Setup's controller does not watch that type", h.primary.gvk.Kind)
	}
	for _, key := range keys {
		hd := m.cache.handles[key]
		for _, obj := range hd.inf.list() {
			for _, hh := range hd.handlers {
				hh.OnAdd(hd.view(obj), true)
			}
		}
	}
	mc.flush()
}

// takeController reads the reconciler and options of the controller the
// builder made (controller-runtime's internal controller, whose fields are
// exported) and points its queue constructor at q. A controller of another
// shape is refused with what to do.
func takeController(ctrl manager.Runnable, q *queueAdapter) (reconcile.Reconciler, error) {
	v := reflect.ValueOf(ctrl)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("the manager got a controller of type %T, not controller-runtime's; opcheck supports controllers built by sigs.k8s.io/controller-runtime v0.25", ctrl)
	}
	e := v.Elem()
	field := func(name string) (reflect.Value, error) {
		f := e.FieldByName(name)
		if !f.IsValid() {
			return f, fmt.Errorf("controller type %T has no field %s: opcheck supports controllers built by sigs.k8s.io/controller-runtime v0.25", ctrl, name)
		}
		return f, nil
	}
	do, err := field("Do")
	if err != nil {
		return nil, err
	}
	rec, ok := do.Interface().(reconcile.Reconciler)
	if !ok || rec == nil {
		return nil, fmt.Errorf("controller %T has no reconcile.Reconciler (typed requests other than reconcile.Request are not supported)", ctrl)
	}
	mcr, err := field("MaxConcurrentReconciles")
	if err != nil {
		return nil, err
	}
	if n := mcr.Int(); n > 1 {
		return nil, fmt.Errorf("MaxConcurrentReconciles is %d: opcheck runs one reconcile of a controller at a time and does not model concurrent reconciles; set it to 1 for the check", n)
	}
	if rt, err := field("ReconciliationTimeout"); err == nil && rt.Int() != 0 {
		return nil, fmt.Errorf("ReconciliationTimeout is set: a wall-clock deadline on reconciles is not modelled; leave it unset for the check")
	}
	nq, err := field("NewQueue")
	if err != nil {
		return nil, err
	}
	newQueue := func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return q
	}
	fv := reflect.ValueOf(newQueue)
	if nq.Type() != fv.Type() || !nq.CanSet() {
		return nil, fmt.Errorf("controller %T: its NewQueue field is %s; opcheck supports controllers built by sigs.k8s.io/controller-runtime v0.25", ctrl, nq.Type())
	}
	nq.Set(fv)
	warm, err := field("EnableWarmup")
	if err != nil {
		return nil, err
	}
	if warm.IsNil() || !warm.Elem().Bool() {
		// The builder's options may set EnableWarmup false explicitly;
		// opcheck needs the sources started without workers.
		yes := true
		warm.Set(reflect.ValueOf(&yes))
	}
	return rec, nil
}

// indexedList serves a cached List with a field selector as
// controller-runtime's cache does: exact matches only, each on a field
// registered with IndexField (there are no built-in field indexes in the
// informer cache), combined with the namespace and label selectors.
func (h *Host) indexedList(k *kindInfo, o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	indexers := h.managed.mgr.cache.indexers[k]
	reqs := o.Fields.Requirements()
	for _, r := range reqs {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return nil, 0, false, fmt.Errorf("non-exact field matches are not supported by the cache (selector %q)", o.Fields.String())
		}
		if indexers[r.Field] == nil {
			return nil, 0, false, fmt.Errorf("index with name field:%s does not exist: register it with mgr.GetFieldIndexer().IndexField(ctx, &%s{}, %q, ...) in Setup", r.Field, k.gvk.Kind, r.Field)
		}
	}
	objs, rev, stale, err := h.watch(k).readList(&ListOptions{Namespace: o.Namespace, Labels: o.Labels})
	if err != nil {
		return nil, rev, stale, err
	}
	out := objs[:0:0]
	for _, obj := range objs {
		ok := true
		for _, r := range reqs {
			if !slices.Contains(indexers[r.Field](obj), r.Value) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, obj)
		}
	}
	return out, rev, stale, nil
}
