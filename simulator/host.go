package simulator

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"regexp"
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
	// keepsMemory is ControllerSpec.KeepsMemory; memory is what each
	// incarnation's digest of it reads, set when the world's chooser
	// merges states (the only reader of the digest, through StateHash).
	keepsMemory bool
	memory      *memorySources
}

// Watch maps events of Type to requests.
type Watch struct {
	Type client.Object
	Map  func(obj client.Object) []reconcile.Request
}

// Host runs one incarnation of a controller under test: its informers
// (list-then-watch from the apiserver it is connected to), its work queue,
// and the reconcile in flight, which runs on a coroutine of its own but only
// ever while the scheduler waits for it: control passes back and forth at
// every API call, so exactly one goroutine runs at a time.
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
	// co is the coroutine this host's reconciles run on, nil until the
	// first one and after one ended it (see reconcileCoroutine).
	co *reconcileCoroutine
	// managed is set for a spec with Setup: the controller-runtime
	// controller's event handlers decide what is enqueued.
	managed *managedController
	// memory is the digest of what this incarnation was told, for a
	// controller that keeps memory between reconciles; nil otherwise.
	memory *reconcilerMemory
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
	co         *reconcileCoroutine
	allowance  int // API calls the current step may make (0 or 1)
	calls      int
	crashed    bool // unwinding: every further API call unwinds again
	overBudget bool
	done       bool
	result     reconcile.Result
	err        error
	panicked   string
	// exited: the reconciler ended its goroutine itself
	// (runtime.Goexit), so the host's coroutine is gone.
	exited bool
}

// unwind is the panic value with which a reconcile's API call unwinds the
// reconcile when a crash strikes it or it exceeds its call budget: exec
// recovers it, and records no panic of the reconciler's. A reconciler that
// recovers it itself (a deferred recover that turns panics into errors)
// unwinds again at its next API call and can no longer touch the cluster;
// whatever it returns is discarded.
type unwind struct{ why string }

// reconcileCoroutine is the coroutine (iter.Pull) a host's reconciles run
// on, one after another, while the scheduler waits: control passes at
// every API call by a direct switch on the same thread, not through
// channels between goroutines, which made the runtime wake an idle
// thread at every handoff (on two cores a random zookeeper/fixed schedule
// took 15-20% longer that way than with GOMAXPROCS=1). Reusing one
// coroutine for every reconcile keeps the stack earlier reconciles grew:
// the store's deep comparisons and copies run on it and need tens of
// kilobytes, which a fresh goroutine reaches only by doubling its stack,
// copying it each time.
type reconcileCoroutine struct {
	resume func() (struct{}, bool) // runs the coroutine to its next park
	stop   func()
	yield  func(struct{}) bool // parks the coroutine; false once stopped
	next   *reconcileRun       // the reconcile to start when resumed idle
}

func newReconcileCoroutine() *reconcileCoroutine {
	co := &reconcileCoroutine{}
	co.resume, co.stop = iter.Pull(co.body)
	return co
}

// body runs one reconcile per resume from idle, and parks between them;
// it returns (ending the coroutine) when stopped.
func (co *reconcileCoroutine) body(yield func(struct{}) bool) {
	co.yield = yield
	growStack()
	for {
		run := co.next
		co.next = nil
		if run == nil {
			return
		}
		run.exec()
		if !yield(struct{}{}) {
			return
		}
	}
}

// coroutineStackFrame is the frame growStack takes: with what the
// coroutine holds below it, enough that the runtime gives the coroutine's
// goroutine a 64 KiB stack at once.
const coroutineStackFrame = 40 << 10

// growStack grows the calling goroutine's stack, while it is still nearly
// empty, to what a reconcile needs: a reconcile reaches tens of kilobytes
// deep (the reconciler's own calls, the store's copies and comparisons,
// the property monitors run at each recorded event), and a fresh
// goroutine gets there by doubling its stack from 8 KiB, copying and
// adjusting every frame on it each time (2.9% of kuberay/lifecycle).
// Growing it here copies one frame, once per coroutine.
//
//go:noinline
func growStack() {
	var frame [coroutineStackFrame]byte
	keepFrame(frame[:])
}

//go:noinline
func keepFrame(b []byte) { b[0] = 1 }

// park hands control back to the scheduler until the next resume.
func (r *reconcileRun) park() {
	if !r.co.yield(struct{}{}) {
		// Stopped while parked: abandon resumes a parked reconcile
		// (crashed) before it stops the coroutine, so this is a bug.
		panic("opcheck: a reconcile's coroutine was stopped while its reconcile was in flight")
	}
}

type runKey struct{}

// discardLogContext is the context every reconcile's starts from: its
// logger discards. Contexts are immutable, so every reconcile of every
// world shares it instead of boxing a logger into a new one each time.
var discardLogContext = log.IntoContext(context.Background(), logr.Discard())

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
	if spec.memory != nil {
		h.memory = &reconcilerMemory{sources: spec.memory}
		h.client.memory = h.memory
	}
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
		panic(unwind{"crashed"})
	}
	r.calls++
	if r.calls > r.host.maxCalls() {
		r.overBudget = true
		panic(unwind{"over its call budget"})
	}
	if r.allowance > 0 {
		r.allowance--
		return
	}
	r.park()
	if r.crashed {
		panic(unwind{"crashed"})
	}
	r.allowance--
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
		if h.co == nil {
			h.co = newReconcileCoroutine()
		}
		run = &reconcileRun{host: h, req: req, co: h.co, allowance: 1}
		h.run = run
		w.reconciles++
		w.Record(model.Event{Actor: h.actor, Op: model.OpReconcile, Kind: h.primary.gvk.Kind, Namespace: req.Namespace, Name: req.Name, Server: h.server.ID, HeadRev: w.Store.rev})
		h.co.next = run
	} else {
		run.allowance = 1
	}
	run.co.resume()
	if run.done {
		if run.exited {
			h.dropCoroutine()
		}
		h.finish(run)
	}
}

// dropCoroutine lets go of a coroutine whose reconciler called
// runtime.Goexit: exec parked it in its last deferred call, after every
// deferred function of the reconciler had run. Stopping it lets the Goexit
// finish, which ends the coroutine's goroutine and then, as iter.Pull
// propagates a Goexit, the goroutine that stopped it: a goroutine of its
// own, so the scheduler carries on. Nothing of the reconciler's runs any
// more, so the world stays single-threaded.
func (h *Host) dropCoroutine() {
	stop := h.co.stop
	h.co = nil
	go stop()
}

func (r *reconcileRun) exec() {
	returned := false
	defer func() {
		p := recover()
		if _, unwound := p.(unwind); p != nil && !unwound && !r.crashed && !r.overBudget {
			r.panicked = fmt.Sprintf("panic: %v\n%s", p, cleanStack(debug.Stack()))
		}
		r.done = true
		if !returned && p == nil {
			// Neither a return nor a panic (a nil panic value is a
			// *runtime.PanicNilError): the reconciler called
			// runtime.Goexit itself. It is reported as a panic: it
			// would take a controller-runtime worker with it for
			// good. The Goexit would end the coroutine and then,
			// propagated by iter.Pull, the scheduler's goroutine:
			// park here instead, after every deferred function of
			// the reconciler has run, and let dropCoroutine finish
			// it on a goroutine of its own.
			r.exited = true
			if !r.crashed && !r.overBudget {
				r.panicked = "runtime.Goexit in Reconcile (t.FailNow?): a controller-runtime worker that ends its goroutine is gone for good\n" + cleanStack(debug.Stack())
			}
			r.co.yield(struct{}{})
		}
	}()
	ctx := context.WithValue(discardLogContext, runKey{}, r)
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
// cluster again: it panics (unwind) at the API call it is parked at
// (deferred functions run, but their API calls unwind too), and ends the
// host's coroutine.
func (h *Host) abandon() {
	if h.managed != nil {
		h.managed.cancel()
	}
	run := h.run
	if run != nil {
		run.crashed = true
		run.co.resume()
		h.run = nil
		if run.exited {
			h.dropCoroutine()
		}
	}
	if h.co != nil {
		h.co.stop()
		h.co = nil
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
	if h.memory != nil {
		h.memory.external()
	}
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
		strings.HasPrefix(fn, "panic(") || strings.HasPrefix(fn, hostPackage) ||
		strings.HasPrefix(fn, "iter.")
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
