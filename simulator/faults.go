package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// faultInjector is the part of a World that injects faults: it offers the
// fault steps the budget still allows (crash-restart, paused watch cache,
// dropped watch event, watch expiry, pod eviction), spends the budget for
// the one chosen, keeps what a fault left behind (the paused caches) and
// ends it all when the settle phase starts. It also notes, once, when the
// faults' last effects are gone (CaughtUp).
type faultInjector struct {
	budget     model.FaultBudget
	staleKinds []*kindInfo // the kinds a stale fault may pause
	paused     []*pausedCache
	caughtUp   bool // the CaughtUp event is recorded

	pauseSteps []Step               // the stale-fault steps, built once
	pauseOf    []pauseTarget        // the cache each of pauseSteps pauses
	evictions  revisionMemo[[]Step] // the eviction steps at one revision
}

// unobserved reports whether a pause of a watch cache of apiserver s now
// goes unseen until the faults end (model.Option.Unobserved): only the
// controllers bound to s (their informers, their API readers and their
// relists) and the clients of Cluster.Client without quorum read its
// caches; built-in actors, the user and the properties read with quorum.
// With no crash left, no controller can be restarted onto s, and the
// settle phase resumes the cache.
func (f *faultInjector) unobserved(w *World, s *APIServer) bool {
	if f.budget.Crashes > 0 || s.cacheReader {
		return false
	}
	for _, h := range w.hosts {
		if h.server == s {
			return false
		}
	}
	return true
}

// bound reports whether a controller other than except is bound to
// apiserver s (its informers and its API reader read s's caches).
func (w *World) bound(s *APIServer, except *Host) bool {
	for _, h := range w.hosts {
		if h.server == s && h != except {
			return true
		}
	}
	return false
}

// noteSeen marks the paused caches something may have read behind the
// store: a change of the cache's kind was written after the pause while
// a controller was bound to its apiserver or a client reads its caches.
// From then on the controllers bound there may have acted on what the
// cache held back (an informer that missed events, a read that returned
// an old object) and the pause made a difference. A cache at the store's
// head serves what an unpaused one would. This runs at every step of the
// fault phase, so at every crash, and only a crash rebinds a controller:
// a cache that falls behind while nobody is bound to it is marked when
// the next crash binds a controller there, before that controller runs.
func (f *faultInjector) noteSeen(w *World) {
	for _, p := range f.paused {
		if !p.seen && p.server.Pending(p.cache) > 0 && (p.server.cacheReader || w.bound(p.server, nil)) {
			p.seen = true
		}
	}
}

// strands reports whether the crash of host h restarting on apiserver to
// strands a pause nothing saw (model.Option.StrandsPause): it is the last
// crash of the budget, and a paused cache that was never read behind the
// store (noteSeen) is on an apiserver that, after the crash, no controller
// is bound to and no client reads the caches of. Nothing reads that cache
// before the settle phase resumes it. The apiserver is h's own (the crash
// moves h away from it) or one nobody was bound to since the pause (the
// crash that could have moved a controller there restarts it elsewhere).
func (f *faultInjector) strands(w *World, h *Host, to *APIServer) bool {
	if f.budget.Crashes != 1 {
		return false
	}
	for _, p := range f.paused {
		if s := p.server; !p.seen && s != to && !s.cacheReader && !w.bound(s, h) {
			return true
		}
	}
	return false
}

// pauseTarget is the watch cache a stale-fault step pauses.
type pauseTarget struct {
	server *APIServer
	kind   *kindInfo
}

// pausedCache is a watch cache a stale fault paused.
type pausedCache struct {
	server *APIServer
	cache  *WatchCache
	resume *Step // the step that resumes it, built once
	// seen: something may have read the cache behind the store (noteSeen).
	seen bool
}

// spend takes the fault from the budget.
func (f *faultInjector) spend(kind model.FaultKind) { f.budget = f.budget.Spend(kind) }

// end ends the fault phase: paused caches resume, no more faults.
func (f *faultInjector) end(w *World) {
	w.record(model.ActorFault, model.OpSettle, "", "", "", "faults are over: "+f.budget.String()+" left unused")
	for _, p := range f.paused {
		p.server.Resume(p.cache)
		w.record(model.ActorFault, model.OpResumeCache, p.cache.kind.gvk.Kind, "", "", string(model.APIServerActor(p.server.ID)))
	}
	f.paused = nil
}

// noteCaughtUp records, once per run, the first moment in the settle
// phase when no watch cache is paused and every informer has received
// every event of its apiserver (and healed what it lost): from here on the
// controllers see the store as it is, and a reconcile that keeps failing is
// not failing on a view the faults left stale (properties.NoStuckReconcile).
func (f *faultInjector) noteCaughtUp(w *World) {
	if f.caughtUp || len(f.paused) > 0 {
		return
	}
	for _, h := range w.hosts {
		for _, inf := range h.informers {
			if inf.lost || inf.hasPending() {
				return
			}
		}
	}
	f.caughtUp = true
	w.record(model.ActorFault, model.OpCaughtUp, "", "", "", "every informer at revision "+w.Store.rev.String())
}

// inForce reports whether a fault still holds the controllers back: a
// paused watch cache, or an informer that lost an event and has not
// relisted since.
func (f *faultInjector) inForce(w *World) bool {
	if len(f.paused) > 0 {
		return true
	}
	for _, h := range w.hosts {
		for _, inf := range h.informers {
			if inf.lost {
				return true
			}
		}
	}
	return false
}

// steps appends the faults the budget still allows.
func (f *faultInjector) steps(w *World, buf []Step) []Step {
	b := f.budget
	if len(f.paused) > 0 {
		f.noteSeen(w)
	}
	// The fault steps only change with the hosts, the servers and the
	// kinds, so they are built once (this runs at every decision).
	if b.Crashes > 0 {
		for _, h := range w.hosts {
			hs := w.stepsOf(h)
			if hs.crash == nil {
				for _, s := range w.Servers {
					h, s := h, s
					hs.crash = append(hs.crash, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultCrash, Server: s.ID, Label: "crash " + string(h.actor) + ", restart on " + string(model.APIServerActor(s.ID)), Run: func() { f.crash(w, h, s) }})
				}
			}
			at := len(buf)
			buf = append(buf, hs.crash...)
			if len(f.paused) > 0 {
				for i := at; i < len(buf); i++ {
					buf[i].StrandsPause = f.strands(w, h, w.Server(buf[i].Server))
				}
			}
		}
	}
	// While the budget lasts, any cache not paused yet may be paused, also
	// while others are: an apiserver that lags usually lags in every
	// cache, and a stale budget of N then means N caches behind at once
	// (the exhaustive search keeps each paused until the faults end).
	if b.Stale > 0 {
		if f.pauseSteps == nil {
			for _, s := range w.Servers {
				for _, k := range f.staleKinds {
					s, k := s, k
					f.pauseSteps = append(f.pauseSteps, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultStale, Kind: k.gvk.Kind, Label: "pause " + string(model.APIServerActor(s.ID)) + " " + k.gvk.Kind + " cache", Run: func() { f.pause(w, s, k) }})
					f.pauseOf = append(f.pauseOf, pauseTarget{s, k})
				}
			}
		}
		for i := range f.pauseSteps {
			if len(f.paused) > 0 && f.isPaused(f.pauseOf[i]) {
				continue
			}
			st := f.pauseSteps[i]
			st.Unobserved = f.unobserved(w, f.pauseOf[i].server)
			buf = append(buf, st)
		}
	}
	if len(f.paused) > 0 {
		p := f.paused[0]
		if p.resume == nil {
			p.resume = &Step{Actor: model.ActorFault, Class: model.StepResume, Label: "resume " + string(model.APIServerActor(p.server.ID)) + " " + p.cache.kind.gvk.Kind + " cache", Run: func() { f.resume(w) }}
		}
		buf = append(buf, *p.resume)
	}
	if b.Drops > 0 {
		for _, h := range w.hosts {
			for _, inf := range h.informers {
				if inf.hasPending() {
					buf = append(buf, w.informerSteps(h, inf).drop)
				}
			}
		}
	}
	if b.Expiries > 0 {
		for _, h := range w.hosts {
			for _, inf := range h.informers {
				h, inf := h, inf
				buf = append(buf, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultExpire, Kind: inf.kind.gvk.Kind, Label: "expire " + inf.kind.gvk.Kind + " watch of " + string(h.actor), Run: func() { f.expire(w, h, inf) }})
			}
		}
	}
	if b.Evictions > 0 {
		buf = append(buf, f.evictionSteps(w)...)
	}
	return buf
}

// evictionSteps are the pods an eviction may strike: running, not being
// deleted. They only change with the pods, so they are computed once per
// version of the pods' table (this runs at every decision).
func (f *faultInjector) evictionSteps(w *World) []Step {
	key := tablesKey(w, nil, w.podKind(), nil, nil)
	if steps, ok := f.evictions.get(key); ok {
		return steps
	}
	steps := f.evictions.last()[:0]
	for _, obj := range storedList(w, w.podKind(), "") {
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning {
			ns, name := pod.Namespace, pod.Name
			steps = append(steps, Step{Actor: model.ActorFault, Class: model.StepFault, Fault: model.FaultEvict, Namespace: ns, Name: name, Label: "evict pod " + ns + "/" + name, Run: func() { f.evict(w, ns, name) }})
		}
	}
	f.evictions.set(key, steps)
	return steps
}

// crash kills the controller at its current API call and starts a new
// incarnation connected to apiserver s.
func (f *faultInjector) crash(w *World, h *Host, s *APIServer) {
	detail := "idle"
	if h.run != nil {
		detail = fmt.Sprintf("in reconcile %s before API call %d", h.run.req, h.run.calls) // calls counts the call it is parked at
	}
	h.abandon()
	w.record(model.ActorFault, model.OpCrash, "", "", string(h.actor), detail)
	nh := newHost(w.Cluster, h.spec, s, h.incarnation+1)
	w.replaceHost(h, nh)
	detail = string(model.APIServerActor(s.ID))
	for _, inf := range nh.informers {
		detail += fmt.Sprintf("; %s listed at rev %d", inf.kind.gvk.Kind, inf.rev)
		if inf.rev < w.Store.rev && w.Server(s.ID).Cache(inf.kind).paused {
			detail += " (paused cache)"
		}
	}
	w.record(model.ActorFault, model.OpRestart, "", "", string(nh.actor), detail)
}

// isPaused reports whether a stale fault paused t's cache and it has not
// resumed.
func (f *faultInjector) isPaused(t pauseTarget) bool {
	for _, p := range f.paused {
		if p.server == t.server && p.cache.kind == t.kind {
			return true
		}
	}
	return false
}

// pause stops apiserver s's cache of kind k where it is.
func (f *faultInjector) pause(w *World, s *APIServer, k *kindInfo) {
	c := s.Cache(k)
	s.Sync(c) // a following cache is at the head when the partition starts
	s.Pause(c)
	f.paused = append(f.paused, &pausedCache{server: s, cache: c})
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpPauseCache, Kind: k.gvk.Kind, Server: s.ID, ReadRev: c.rev, HeadRev: w.Store.rev})
}

// resume lets the oldest paused cache follow the store again.
func (f *faultInjector) resume(w *World) {
	p := f.paused[0]
	f.paused = f.paused[1:]
	p.server.Resume(p.cache)
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpResumeCache, Kind: p.cache.kind.gvk.Kind, Server: p.server.ID, ReadRev: p.cache.rev, HeadRev: w.Store.rev})
}

// drop loses the next watch event the informer would receive, whatever
// its type (an object's last event, its deletion, included): the informer
// moves past it without seeing it, and stays wrong about that object until
// it relists (a restart, a watch expiry, or the settle phase's relist).
func (f *faultInjector) drop(w *World, h *Host, inf *informer) {
	c, mustRelist := inf.next()
	if c == nil || mustRelist {
		return
	}
	inf.skip(c)
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpDropEvent, Kind: inf.kind.gvk.Kind, Namespace: c.Object.GetNamespace(), Name: c.Object.GetName(), Rev: c.Rev, HeadRev: w.Store.rev, Detail: c.Type.String() + " for " + string(h.actor)})
}

// expire answers the informer's watch with 410 Gone: it relists from its
// apiserver (stale, if that cache is paused) and notifies every
// difference.
func (f *faultInjector) expire(w *World, h *Host, inf *informer) {
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpExpireWatch, Kind: inf.kind.gvk.Kind, Server: h.server.ID, ReadRev: inf.rev, HeadRev: w.Store.rev, Detail: "for " + string(h.actor)})
	w.relist(h, inf, "watch expired (410): relisted")
}

// evict deletes a running pod, as the eviction API or a node-pressure
// eviction would.
func (f *faultInjector) evict(w *World, namespace, name string) {
	w.Record(model.Event{Actor: model.ActorFault, Op: model.OpEvict, Kind: "Pod", Namespace: namespace, Name: name, HeadRev: w.Store.rev})
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = namespace, name
	_ = w.ActorClient(model.ActorFault).Delete(context.Background(), pod, client.PropagationPolicy("Background"))
}

// hashPaused adds the caches a stale fault paused, with their contents,
// to a state fingerprint. The content of a cache nothing can read before
// the faults end (an apiserver no controller is bound to and no cache
// reader uses, with no crash left: unobserved) decides nothing: the settle
// phase resumes it unread, and it then serves the head like any other.
// Only that it is paused is added, so that two paths that paused it at
// different moments and then moved every reader away merge. While a
// crash is left, whether something may have read the cache behind the
// store (pausedCache.seen) is added too: it decides whether the last
// crash strands the pause (strands), so two paths that differ in it offer
// different crashes from the same world.
func (f *faultInjector) hashPaused(w *World, fp *fingerprint) {
	for _, p := range f.paused {
		fp.put(uint64(p.server.ID))
		fp.putS(p.cache.kind.gvk.Kind)
		if f.unobserved(w, p.server) {
			fp.put(unreadCache)
			continue
		}
		if f.budget.Crashes > 0 {
			seen := uint64(0)
			if p.seen {
				seen = 1
			}
			fp.put(seen)
		}
		w.hashObjects(fp.h, p.cache.kind, p.cache.objects, fp.put, fp.putS)
		w.hashBacklog(p.cache, fp.put, fp.putS)
	}
}

// unreadCache stands for the content of a paused cache nothing will read
// in a state fingerprint.
const unreadCache = 0x756e72656164 // "unread"

// hashBudget adds the fault budget left to a state fingerprint.
func (f *faultInjector) hashBudget(fp *fingerprint) {
	b := f.budget
	fp.put(uint64(b.Crashes)<<48 | uint64(b.Stale)<<32 | uint64(b.Drops)<<16 | uint64(b.Evictions))
}
