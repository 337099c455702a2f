package simulator

import (
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// The steps the world takes for its hosts: delivering watch events to
// their informers, relisting, and the steps of each host built once.

// deliver hands the informer the next watch event its apiserver has for
// it, one event per step as client-go delivers them, so that every
// intermediate state (a pod Terminating, then gone) reaches the handlers
// and the reconciler can read it in between. An informer that fell out of
// the apiserver's window relists instead (410 Gone).
func (w *World) deliver(h *Host, inf *informer) {
	c, mustRelist := inf.next()
	if mustRelist {
		w.relist(h, inf, "watch expired (410): relisted")
		return
	}
	if c == nil {
		return
	}
	old := inf.apply(c)
	h.handle(inf.kind, old, c.Object)
	if h.memory != nil {
		h.memory.answer(c.Object)
	}
	w.Record(model.Event{Actor: h.actor, Op: model.OpDeliver, Kind: inf.kind.gvk.Kind, Namespace: c.Object.GetNamespace(), Name: c.Object.GetName(), Rev: c.Rev, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: c.Type.String()})
}

// relist replaces the informer's contents with its apiserver's list and
// notifies the handlers of every difference, deletions it missed included.
func (w *World) relist(h *Host, inf *informer, why string) {
	olds, news := inf.relistChanges()
	for i := range olds {
		switch {
		case news[i] == nil:
			h.handle(inf.kind, olds[i], olds[i]) // a deletion the informer missed
		default:
			h.handle(inf.kind, olds[i], news[i])
		}
	}
	w.Record(model.Event{Actor: h.actor, Op: model.OpDeliver, Kind: inf.kind.gvk.Kind, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: why + "; " + strconv.Itoa(len(olds)) + " changed"})
}

// hostSteps are the steps of one host that do not change while it lives:
// its crashes (one per apiserver it may restart on), starting a reconcile,
// and, per informer, delivering the next watch event and dropping it. They
// are built once, since the scheduler asks for them at every decision;
// continuing a reconcile is built once per request it reconciles (its
// label names the request).
type hostSteps struct {
	crash     []Step
	informers map[*informer]*informerSteps
	start     *Step
	continued *reconcileRun // the reconcile cont continues
	cont      Step
	// contReq is the request cont's label names: a controller mostly
	// reconciles the same few requests, and the label is kept until the
	// request changes.
	contReq reconcile.Request
}

// reconcileStep is host h's reconcile step: continue the reconcile in
// flight, or start the next one.
func (w *World) reconcileStep(h *Host) Step {
	hs := w.stepsOf(h)
	if h.run == nil {
		if hs.start == nil {
			hs.start = &Step{Actor: h.actor, Class: model.StepReconcile, Label: "reconcile", Run: h.step}
		}
		return *hs.start
	}
	if hs.continued != h.run {
		hs.continued = h.run
		if hs.cont.Run == nil || hs.contReq != h.run.req {
			hs.contReq = h.run.req
			hs.cont = Step{Actor: h.actor, Class: model.StepReconcile, Label: "continue " + h.run.req.String(), Run: h.step}
		}
	}
	return hs.cont
}

// informerSteps are the steps of one informer of a host: delivering its
// next watch event, and dropping one.
type informerSteps struct{ deliver, drop Step }

// stepsOf returns host h's steps cache.
func (w *World) stepsOf(h *Host) *hostSteps {
	st := w.hostSteps[h]
	if st == nil {
		if w.hostSteps == nil {
			w.hostSteps = map[*Host]*hostSteps{}
		}
		st = &hostSteps{informers: map[*informer]*informerSteps{}}
		w.hostSteps[h] = st
	}
	return st
}

// informerSteps builds an informer's steps once: their labels and closures
// do not change while the host lives.
func (w *World) informerSteps(h *Host, inf *informer) *informerSteps {
	hs := w.stepsOf(h)
	if st := hs.informers[inf]; st != nil {
		return st
	}
	st := &informerSteps{
		deliver: Step{Actor: h.actor, Class: model.StepDeliver, Label: "deliver " + inf.kind.gvk.Kind, Run: func() { w.deliver(h, inf) }},
		drop:    Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultDrop, Kind: inf.kind.gvk.Kind, Label: "drop " + inf.kind.gvk.Kind + " event for " + string(h.actor), Run: func() { w.faults.drop(w, h, inf) }},
	}
	hs.informers[inf] = st
	return st
}

// replaceHost puts nh where old was (a crash restarts a controller) and
// drops old's steps.
func (w *World) replaceHost(old, nh *Host) {
	for i, h := range w.hosts {
		if h == old {
			w.hosts[i] = nh
		}
	}
	delete(w.hostSteps, old)
}
