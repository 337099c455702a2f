package simulator

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// untilMemo remembers which kinds a workload step's Until condition read
// and each kind's latest change when it last ran: a condition reads ground
// truth only through its reader, so while none of those kinds changed its
// answer cannot have changed either, and it is not asked again. (The
// conditions of the shipped scenarios list pods while most steps change
// other kinds.)
type untilMemo struct {
	w     *World
	seen  []untilKind
	blind bool // the condition read something the memo cannot follow
}

type untilKind struct {
	kind *kindInfo
	rev  model.Revision
}

// reset starts a new condition.
func (m *untilMemo) reset(w *World) {
	m.w, m.seen, m.blind = w, m.seen[:0], true
}

// reader returns the reader to hand the condition; what it reads from now
// on is noted.
func (m *untilMemo) reader() client.Reader {
	m.seen, m.blind = m.seen[:0], false
	return untilReader{m}
}

// unchanged reports whether none of the kinds the condition read last
// time has changed since.
func (m *untilMemo) unchanged() bool {
	if m.w == nil || m.blind {
		return false
	}
	for _, s := range m.seen {
		if m.w.lastChange(s.kind) != s.rev {
			return false
		}
	}
	return true
}

func (m *untilMemo) note(obj runtime.Object) {
	k, err := m.w.Store.kinds.forObject(obj)
	if err != nil {
		m.blind = true
		return
	}
	for _, s := range m.seen {
		if s.kind == k {
			return
		}
	}
	m.seen = append(m.seen, untilKind{k, m.w.lastChange(k)})
}

// lastChange is the revision of the latest change to kind k (0 for none).
func (w *World) lastChange(k *kindInfo) model.Revision {
	changes := w.Store.table(k).changes
	if len(changes) == 0 {
		return 0
	}
	return changes[len(changes)-1].Rev
}

// untilReader is the ground-truth reader a condition gets (World.Reader's,
// unrecorded), noting the kinds it reads.
type untilReader struct{ m *untilMemo }

func (r untilReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.m.note(obj)
	return r.m.w.peek.Get(ctx, key, obj, opts...)
}

func (r untilReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.m.note(list)
	return r.m.w.peek.List(ctx, list, opts...)
}
