package simulator

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// DefaultMaxCallsPerReconcile bounds the API calls of one reconcile; a
// reconcile that makes more is reported (OpStepBudget) and abandoned.
const DefaultMaxCallsPerReconcile = 500

// hostSpec is what a Host needs of a controller under test: the world
// derives it from the scenario's ControllerSpec (controller_spec.go) once
// per controller, and every incarnation of the controller runs it.
type hostSpec struct {
	name    string
	forType client.Object
	owns    []client.Object
	watches []Watch
	// setup is ControllerSpec.Setup; with it, newReconciler is nil.
	setup func(ctx context.Context, mgr manager.Manager) error
	// newReconciler builds the reconciler of a new incarnation from the
	// client it must use.
	newReconciler func(c *Client, actor model.Actor) reconcile.Reconciler
	maxCalls      int
}

// Watch maps events of Type to requests.
type Watch struct {
	Type client.Object
	Map  func(obj client.Object) []reconcile.Request
}

// Host runs one incarnation of a controller under test: its informers
// (list-then-watch from the apiserver it is connected to), its work queue,
// and the reconcile in flight, which runs on its own goroutine but only ever
// while the scheduler waits for it: control passes back and forth at every
// API call, so exactly one goroutine runs at a time.
type Host struct {
	spec        *hostSpec
	cluster     *Cluster
	actor       model.Actor
	server      *APIServer
	incarnation int

	primary   *kindInfo
	owns      []*kindInfo
	informers []*informer // watched kinds in declaration order, then lazily added ones
	byKind    map[*kindInfo]*informer

	queue      *workQueue
	reconciler reconcile.Reconciler
	client     *Client
	run        *reconcileRun
	// worker is the goroutine this host's reconciles run on, nil until
	// the first one and after one ended it (see reconcileWorker).
	worker reconcileWorker
	// managed is set for a spec with Setup: the controller-runtime
	// controller's event handlers decide what is enqueued.
	managed *managedController
}

// Actor is the host's actor name, "controller/<name>".
func (h *Host) Actor() model.Actor { return h.actor }

// Server is the apiserver this incarnation is connected to.
func (h *Host) Server() int { return h.server.ID }

// InFlight reports whether a reconcile is parked at an API call.
func (h *Host) InFlight() bool { return h.run != nil }

// reconcileRun is one reconcile in flight.
type reconcileRun struct {
	host       *Host
	req        reconcile.Request
	resume     chan struct{}
	yield      chan struct{}
	allowance  int // API calls the current step may make (0 or 1)
	calls      int
	crashed    bool // unwinding: every further API call exits the goroutine
	overBudget bool
	done       bool
	result     reconcile.Result
	err        error
	panicked   string
	// exited: the reconcile ended its goroutine (runtime.Goexit, by a
	// crash, the call budget or the reconciler itself), so the host's
	// worker is gone.
	exited bool
}

// reconcileWorker is the goroutine a host's reconciles run on, one after
// another. Reusing it, instead of starting a goroutine per reconcile,
// keeps the stack earlier reconciles grew: the store's deep comparisons
// and copies run on it and need tens of kilobytes, which a fresh goroutine
// reaches only by doubling its stack, copying it each time (about 5% of
// the CPU of exploring zookeeper/fixed). A reconcile that ends its
// goroutine (runtime.Goexit) takes the worker with it; the next reconcile
// starts a new one. Closing the channel ends an idle worker.
type reconcileWorker chan *reconcileRun

func (runs reconcileWorker) loop() {
	for r := range runs {
		r.exec()
	}
}

type runKey struct{}

func runFromContext(ctx context.Context) *reconcileRun {
	r, _ := ctx.Value(runKey{}).(*reconcileRun)
	return r
}

func newHost(c *Cluster, spec *hostSpec, server *APIServer, incarnation int) *Host {
	h := &Host{
		spec:        spec,
		cluster:     c,
		actor:       model.ControllerActor(spec.name),
		server:      server,
		incarnation: incarnation,
		byKind:      map[*kindInfo]*informer{},
		queue:       newWorkQueue(),
	}
	h.primary = c.kindOf(spec.forType)
	h.client = &Client{cluster: c, server: server, actor: h.actor, reads: h, gate: h.gate}
	if spec.setup != nil {
		h.startManaged()
		return h
	}
	h.reconciler = spec.newReconciler(h.client, h.actor)
	// Start the watches as the manager does at start: list each type from
	// the apiserver's cache, then enqueue what the handlers map the initial
	// objects to.
	h.watch(h.primary)
	for _, o := range spec.owns {
		k := c.kindOf(o)
		h.owns = append(h.owns, k)
		h.watch(k)
	}
	for _, wt := range spec.watches {
		h.watch(c.kindOf(wt.Type))
	}
	for _, inf := range h.informers {
		for _, obj := range inf.list() {
			h.handle(inf.kind, nil, obj)
		}
	}
	return h
}

func (h *Host) watch(k *kindInfo) *informer {
	if inf := h.byKind[k]; inf != nil {
		return inf
	}
	inf := newInformer(k, h.server)
	h.byKind[k] = inf
	h.informers = append(h.informers, inf)
	return inf
}

// handle maps one watch event (old is nil for adds, new is the last state
// for deletes) to requests, as For/Owns/Watches handlers do.
func (h *Host) handle(k *kindInfo, old, obj client.Object) {
	if h.managed != nil {
		// A delivered delete has left the informer; a relist's objects and
		// delivered adds and updates are in it.
		_, present := h.byKind[k].objects[objectKey(k, obj.GetNamespace(), obj.GetName())]
		h.managed.dispatch(k, old, obj, !present)
		return
	}
	if k == h.primary {
		h.queue.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
	for _, ok := range h.owns {
		if ok != k {
			continue
		}
		h.enqueueOwner(obj)
		if old != nil {
			h.enqueueOwner(old)
		}
	}
	for _, wt := range h.spec.watches {
		if h.cluster.kindOf(wt.Type) != k || wt.Map == nil {
			continue
		}
		for _, r := range wt.Map(obj) {
			h.queue.Add(r)
		}
	}
}

func (h *Host) enqueueOwner(obj client.Object) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != h.primary.gvk.Kind {
		return
	}
	if gv, err := parseGroup(ref.APIVersion); err != nil || gv != h.primary.gvk.Group {
		return
	}
	h.queue.Add(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}})
}

func parseGroup(apiVersion string) (string, error) {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], nil
	}
	return "", nil
}

// read implements reader: the controller's reads come from its informers.
// A type not watched yet gets an informer on first use, as
// controller-runtime's cache starts one on demand.
func (h *Host) read(k *kindInfo, namespace, name string) (client.Object, model.Revision, bool, error) {
	return h.watch(k).read(namespace, name)
}

func (h *Host) readList(k *kindInfo, o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	if h.managed != nil && o.Fields != nil && !o.Fields.Empty() {
		return h.indexedList(k, o)
	}
	return h.watch(k).readList(o)
}

// gate is called by the client before every API call of the reconciler.
func (h *Host) gate(ctx context.Context) {
	run := runFromContext(ctx)
	if run == nil || run.host != h {
		panic("opcheck: a controller's client was used outside its reconcile (from a goroutine of its own, or after Reconcile returned); opcheck steps only calls made from Reconcile itself")
	}
	run.gate()
}

func (r *reconcileRun) gate() {
	if r.crashed {
		r.exit()
	}
	r.calls++
	if r.calls > r.host.maxCalls() {
		r.overBudget = true
		r.exit()
	}
	if r.allowance > 0 {
		r.allowance--
		return
	}
	r.yield <- struct{}{}
	<-r.resume
	if r.crashed {
		r.exit()
	}
	r.allowance--
}

// exit ends the reconcile's goroutine (deferred functions run).
func (r *reconcileRun) exit() {
	r.exited = true
	runtime.Goexit()
}

func (h *Host) maxCalls() int {
	if h.spec.maxCalls > 0 {
		return h.spec.maxCalls
	}
	return DefaultMaxCallsPerReconcile
}

// enabled reports whether the host has a reconcile step to take.
func (h *Host) enabled() bool { return h.run != nil || h.queue.Len() > 0 }

// step runs the controller for one API call: it starts the next reconcile
// or resumes the one in flight, and returns when the reconciler is parked at
// its next call or has returned.
func (h *Host) step() {
	w := h.cluster
	run := h.run
	if run == nil {
		req, _ := h.queue.Pop()
		run = &reconcileRun{host: h, req: req, resume: make(chan struct{}), yield: make(chan struct{}), allowance: 1}
		h.run = run
		w.Record(model.Event{Actor: h.actor, Op: model.OpReconcile, Kind: h.primary.gvk.Kind, Namespace: req.Namespace, Name: req.Name, Server: h.server.ID, HeadRev: w.Store.rev})
		if h.worker == nil {
			h.worker = make(reconcileWorker)
			go h.worker.loop()
		}
		h.worker <- run
		<-run.yield
	} else {
		run.allowance = 1
		run.resume <- struct{}{}
		<-run.yield
	}
	if run.done {
		if run.exited {
			h.worker = nil
		}
		h.finish(run)
	}
}

func (r *reconcileRun) exec() {
	returned := false
	defer func() {
		p := recover()
		if p != nil {
			r.panicked = fmt.Sprintf("panic: %v\n%s", p, cleanStack(debug.Stack()))
		}
		if !returned && p == nil {
			// Neither a return nor a panic (a nil panic value is a
			// *runtime.PanicNilError): the reconciler called
			// runtime.Goexit itself, which ends the worker too.
			r.exited = true
		}
		r.done = true
		r.yield <- struct{}{}
	}()
	ctx := context.WithValue(log.IntoContext(context.Background(), logr.Discard()), runKey{}, r)
	r.result, r.err = r.host.reconciler.Reconcile(ctx, r.req)
	returned = true
}

// finish records the end of a reconcile and requeues as controller-runtime
// does: errors and Requeue back off, RequeueAfter waits, TerminalError does
// not retry, success forgets the backoff.
func (h *Host) finish(run *reconcileRun) {
	w := h.cluster
	h.run = nil
	req := run.req
	e := model.Event{Actor: h.actor, Kind: h.primary.gvk.Kind, Namespace: req.Namespace, Name: req.Name, Server: h.server.ID, HeadRev: w.Store.rev}
	switch {
	case run.crashed:
		return
	case run.overBudget:
		e.Op = model.OpStepBudget
		e.Detail = fmt.Sprintf("reconcile made more than %d API calls; abandoned", h.maxCalls())
		w.Record(e)
		h.queue.Done(req)
		h.queue.AddAfter(req, w.Clock.Now()+h.queue.backoff(req))
		return
	case run.panicked != "":
		e.Op = model.OpPanic
		e.Err = firstLine(run.panicked)
		e.Detail = run.panicked
		w.Record(e)
		h.queue.Done(req)
		h.queue.AddAfter(req, w.Clock.Now()+h.queue.backoff(req))
		return
	}
	e.Op = model.OpReconcileDone
	e.Err = errString(run.err)
	h.queue.Done(req)
	switch {
	case run.err != nil && errors.Is(run.err, reconcile.TerminalError(nil)):
		h.queue.Forget(req)
	case run.err != nil:
		e.Detail = "requeue with backoff"
		h.queue.AddAfter(req, w.Clock.Now()+h.queue.backoff(req))
	case run.result.RequeueAfter > 0:
		e.Detail = "requeue after " + model.FromDuration(run.result.RequeueAfter).String()
		h.queue.Forget(req)
		h.queue.AddAfter(req, w.Clock.Now()+model.FromDuration(run.result.RequeueAfter))
	case run.result.Requeue: //nolint:staticcheck // Requeue is deprecated upstream but still honoured.
		e.Detail = "requeue"
		h.queue.AddAfter(req, w.Clock.Now()+h.queue.backoff(req))
	default:
		e.Detail = "done"
		h.queue.Forget(req)
	}
	w.Record(e)
}

// abandon unwinds the reconcile in flight without letting it touch the
// cluster again: the goroutine exits at its next API call (deferred
// functions run, but their API calls exit too).
func (h *Host) abandon() {
	if h.managed != nil {
		h.managed.cancel()
	}
	run := h.run
	if run != nil {
		run.crashed = true
		run.resume <- struct{}{}
		<-run.yield
		h.run = nil
		if run.exited {
			h.worker = nil
		}
	}
	if h.worker != nil {
		close(h.worker)
		h.worker = nil
	}
}

// CallExternal makes a call to an external system (a ZooKeeper ensemble, a
// Cassandra node agent) one step of the controller, like an API call: the
// scheduler may interleave other actors before it and a crash may strike at
// it. fn performs the call and returns a detail for the history. Outside a
// simulated reconcile (ctx has no run) fn simply runs.
func CallExternal(ctx context.Context, system model.Actor, what string, fn func() (detail string, err error)) error {
	run := runFromContext(ctx)
	if run == nil {
		_, err := fn()
		return err
	}
	run.gate()
	h := run.host
	head := h.cluster.Store.rev
	detail, err := fn()
	if detail != "" {
		what += " " + detail
	}
	h.cluster.Record(model.Event{Actor: h.actor, Op: model.OpExternal, Kind: string(system), Detail: what, Err: errString(err), HeadRev: head})
	return err
}

var (
	stackGoroutine = regexp.MustCompile(`(?m)^goroutine \d+ \[[^\]]*\]:\n`)
	stackOffset    = regexp.MustCompile(` \+0x[0-9a-f]+$`)
	stackCreatedBy = regexp.MustCompile(` in goroutine \d+$`)
)

// cleanStack makes a goroutine stack deterministic and about the
// reconciler: no goroutine ids, no argument words, no PC offsets, file paths
// cut to their last two elements, and no frames of the Go runtime or of
// opcheck's own host (the recover, the goroutine that runs the reconcile),
// whose line numbers would change a recorded trace whenever opcheck changes.
// The same panic gives the same history on every run, machine and opcheck
// version.
func cleanStack(stack []byte) string {
	s := stackGoroutine.ReplaceAllString(string(stack), "")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	out := make([]string, 0, len(lines))
	skipFile := false
	for _, l := range lines {
		l = stackOffset.ReplaceAllString(l, "")
		l = stackCreatedBy.ReplaceAllString(l, "")
		if strings.HasPrefix(l, "\t") {
			if skipFile {
				skipFile = false
				continue
			}
			path := strings.TrimPrefix(l, "\t")
			parts := strings.Split(path, "/")
			if len(parts) > 2 {
				path = strings.Join(parts[len(parts)-2:], "/")
			}
			l = "\t" + path
		} else {
			l = stripArgs(l)
			if harnessFrame(l) {
				skipFile = true
				continue
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// hostPackage is the function-name prefix of this package's frames.
const hostPackage = "github.com/opcheck/opcheck/simulator."

// harnessFrame reports whether a stack frame's function line belongs to the
// Go runtime or to opcheck's host rather than to the code under test.
func harnessFrame(fn string) bool {
	fn = strings.TrimPrefix(fn, "created by ")
	return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "runtime/") ||
		strings.HasPrefix(fn, "panic(") || strings.HasPrefix(fn, hostPackage)
}

// stripArgs replaces the argument words of a frame's function line, e.g.
// "pkg.(*T).F(0xc000, {0x1?, 0x2?}, ...)", with "(...)": they hold
// addresses that differ from run to run.
func stripArgs(l string) string {
	if !strings.HasSuffix(l, ")") {
		return l
	}
	depth := 0
	for i := len(l) - 1; i >= 0; i-- {
		switch l[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return l[:i] + "(...)"
			}
		}
	}
	return l
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// informerCache implements reader: a controller reads from its informers.
func (h *Host) informerCache() bool { return true }
