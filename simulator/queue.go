package simulator

import (
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// workQueue has the semantics of client-go's rate-limited work queue as
// controller-runtime uses it, on the logical clock: a request is queued at
// most once; a request added while it is being processed is queued again
// when processing ends; AddAfter waits on the clock; failures back off
// exponentially per request (5 ms doubling, capped at 1000 s) until Forget.
type workQueue struct {
	ready      []reconcile.Request
	queued     map[reconcile.Request]bool
	processing map[reconcile.Request]bool
	dirty      map[reconcile.Request]bool
	timers     []queueTimer
	timerSeq   int
	failures   map[reconcile.Request]int
}

type queueTimer struct {
	at  model.Time
	seq int // insertion order: ties fire in the order they were set
	req reconcile.Request
}

func newWorkQueue() *workQueue {
	return &workQueue{
		queued:     map[reconcile.Request]bool{},
		processing: map[reconcile.Request]bool{},
		dirty:      map[reconcile.Request]bool{},
		failures:   map[reconcile.Request]int{},
	}
}

// Add queues req unless it is queued already.
func (q *workQueue) Add(req reconcile.Request) {
	if q.processing[req] {
		q.dirty[req] = true
		return
	}
	if q.queued[req] {
		return
	}
	q.queued[req] = true
	q.ready = append(q.ready, req)
}

// AddAfter queues req once the clock reaches at. As client-go's delaying
// queue, a request waits on at most one timer: the earlier time wins.
// timers stays ordered by (at, seq); the new timer has the largest seq, so
// it goes after every timer due at or before at. Inserting there, instead
// of sorting the whole slice, spares sort.Slice's allocations at every
// requeue (TestWorkQueueAnswersAsTheSortedQueue).
func (q *workQueue) AddAfter(req reconcile.Request, at model.Time) {
	for i := range q.timers {
		if q.timers[i].req == req {
			if q.timers[i].at <= at {
				return
			}
			q.timers = append(q.timers[:i], q.timers[i+1:]...)
			break
		}
	}
	q.timerSeq++
	i := sort.Search(len(q.timers), func(i int) bool { return q.timers[i].at > at })
	q.timers = slices.Insert(q.timers, i, queueTimer{at: at, seq: q.timerSeq, req: req})
}

// backoff returns the rate limiter's delay for req's next retry and counts
// the failure.
func (q *workQueue) backoff(req reconcile.Request) model.Time {
	n := q.failures[req]
	q.failures[req] = n + 1
	d := model.Time(5)
	for i := 0; i < n && d < 1000*1000; i++ {
		d *= 2
	}
	if d > 1000*1000 {
		d = 1000 * 1000
	}
	return d
}

// Forget resets req's backoff.
func (q *workQueue) Forget(req reconcile.Request) { delete(q.failures, req) }

// Pop takes the next ready request and marks it processing.
func (q *workQueue) Pop() (reconcile.Request, bool) {
	if len(q.ready) == 0 {
		return reconcile.Request{}, false
	}
	req := q.ready[0]
	// Shift rather than reslice: the slice keeps its storage for the
	// next Add (a reslice from the front loses it, and a long run
	// reallocates at every few requeues).
	n := copy(q.ready, q.ready[1:])
	q.ready[n] = reconcile.Request{}
	q.ready = q.ready[:n]
	delete(q.queued, req)
	q.processing[req] = true
	return req, true
}

// Done ends processing of req, queueing it again if it was added meanwhile.
func (q *workQueue) Done(req reconcile.Request) {
	delete(q.processing, req)
	if q.dirty[req] {
		delete(q.dirty, req)
		q.Add(req)
	}
}

// NextTimer is the earliest pending timer.
func (q *workQueue) NextTimer() (model.Time, bool) {
	if len(q.timers) == 0 {
		return 0, false
	}
	return q.timers[0].at, true
}

// Fire moves every timer due at now to the ready list.
func (q *workQueue) Fire(now model.Time) {
	n := 0
	for n < len(q.timers) && q.timers[n].at <= now {
		q.Add(q.timers[n].req)
		n++
	}
	if n > 0 {
		// Shift rather than reslice, as Pop does.
		m := copy(q.timers, q.timers[n:])
		clear(q.timers[m:])
		q.timers = q.timers[:m]
	}
}

// Len is the number of ready requests.
func (q *workQueue) Len() int { return len(q.ready) }
