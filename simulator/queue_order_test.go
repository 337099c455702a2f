package simulator

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
)

// sortedQueue is the work queue's timer and ready lists as they were kept
// before AddAfter inserted in place and Pop and Fire shifted: every
// AddAfter appended and sorted the whole slice, Pop and Fire resliced
// from the front. It is the slow path TestWorkQueueAnswersAsTheSortedQueue
// holds the queue to.
type sortedQueue struct {
	ready  []reconcile.Request
	queued map[reconcile.Request]bool
	timers []queueTimer
	seq    int
}

func (q *sortedQueue) add(req reconcile.Request) {
	if q.queued[req] {
		return
	}
	q.queued[req] = true
	q.ready = append(q.ready, req)
}

func (q *sortedQueue) addAfter(req reconcile.Request, at model.Time) {
	for i := range q.timers {
		if q.timers[i].req == req {
			if q.timers[i].at <= at {
				return
			}
			q.timers = append(q.timers[:i], q.timers[i+1:]...)
			break
		}
	}
	q.seq++
	q.timers = append(q.timers, queueTimer{at: at, seq: q.seq, req: req})
	sort.Slice(q.timers, func(i, j int) bool {
		if q.timers[i].at != q.timers[j].at {
			return q.timers[i].at < q.timers[j].at
		}
		return q.timers[i].seq < q.timers[j].seq
	})
}

func (q *sortedQueue) pop() (reconcile.Request, bool) {
	if len(q.ready) == 0 {
		return reconcile.Request{}, false
	}
	req := q.ready[0]
	q.ready = q.ready[1:]
	delete(q.queued, req)
	return req, true
}

func (q *sortedQueue) fire(now model.Time) {
	n := 0
	for n < len(q.timers) && q.timers[n].at <= now {
		q.add(q.timers[n].req)
		n++
	}
	q.timers = q.timers[n:]
}

// TestWorkQueueAnswersAsTheSortedQueue runs random sequences of Add,
// AddAfter (ties in time included), Pop and Fire through the work queue
// and through sortedQueue, and compares the ready list, the timers in
// order and every popped request after each operation. The requests are
// done as soon as popped, so the processing set plays no part.
func TestWorkQueueAnswersAsTheSortedQueue(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x71756575))
		q := newWorkQueue()
		ref := &sortedQueue{queued: map[reconcile.Request]bool{}}
		reqs := make([]reconcile.Request, 1+r.IntN(6))
		for i := range reqs {
			reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("r%d", i)}}
		}
		now := model.Time(0)
		for op := range 300 {
			req := reqs[r.IntN(len(reqs))]
			var what string
			switch r.IntN(4) {
			case 0:
				what = "Add"
				q.Add(req)
				ref.add(req)
			case 1:
				// Few distinct times, so timers tie often.
				at := now + model.Time(r.IntN(4)*5)
				what = fmt.Sprintf("AddAfter %s", at)
				q.AddAfter(req, at)
				ref.addAfter(req, at)
			case 2:
				what = "Pop"
				got, ok := q.Pop()
				want, wantOK := ref.pop()
				if got != want || ok != wantOK {
					t.Fatalf("seed %d op %d: Pop = %v %v, want %v %v", seed, op, got, ok, want, wantOK)
				}
				if ok {
					q.Done(got)
				}
			case 3:
				now += model.Time(r.IntN(3) * 5)
				what = fmt.Sprintf("Fire %s", now)
				q.Fire(now)
				ref.fire(now)
			}
			if !equalRequests(q.ready, ref.ready) || !equalTimers(q.timers, ref.timers) {
				t.Fatalf("seed %d op %d (%s): ready %v timers %v, want ready %v timers %v", seed, op, what, q.ready, q.timers, ref.ready, ref.timers)
			}
		}
	}
}

func equalRequests(a, b []reconcile.Request) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func equalTimers(a, b []queueTimer) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}
