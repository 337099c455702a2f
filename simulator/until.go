package simulator

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	t := w.lists.tableOf(w.Store, k)
	if t == nil {
		t = w.Store.table(k) // made now, as a read of the kind would
	}
	changes := t.changes
	if len(changes) == 0 {
		return 0
	}
	return changes[len(changes)-1].Rev
}

// untilReader is the ground-truth reader a condition gets: World.Reader's
// answers (a quorum read of the store's head, unrecorded), noting the kinds
// it reads.
//
// A typed Get or List (of the kind's own Go type, no Limit or Continue) is
// answered without deep copies: the object, or each item, is a shallow
// copy of the stored revision, sharing its maps, slices and pointers with
// the store. Stored revisions are never modified, and a condition must only
// read what it is given (WorkloadStep.Until); the scenarios run every step
// of ~460 with a condition listing pods after every change of a pod, and
// the deep copies were most of what the wait cost.
// TestSharedUntilReads checks, over every shipped scenario, that the
// answers equal World.Reader's and that no stored object changes. Any
// other read (unstructured, metadata-only, a paged list) goes to
// World.Reader.
type untilReader struct{ m *untilMemo }

func (r untilReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.m.note(obj)
	return sharedGet(r.m.w, ctx, key, obj, opts...)
}

func (r untilReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.m.note(list)
	return sharedList(r.m.w, ctx, list, opts...)
}

// sharedGet is World.Reader().Get, with the object shallow-copied from the
// stored revision when obj is of the kind's Go type.
func sharedGet(w *World, ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	k, err := w.Store.kinds.forObject(obj)
	dst := reflect.ValueOf(obj)
	if err != nil || isBindingKind(k) || dst.Kind() != reflect.Pointer || dst.Elem().Type() != k.typ || dst.IsNil() {
		return w.peek.Get(ctx, key, obj, opts...)
	}
	stored, ok := w.Store.peek(k, objectKey(k, key.Namespace, key.Name))
	if !ok {
		return apierrors.NewNotFound(k.gr, key.Name)
	}
	dst.Elem().Set(reflect.ValueOf(stored).Elem())
	// An apiserver's typed answer comes without apiVersion and kind (fill).
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

// sharedList is World.Reader().List, with the items shallow-copied from
// the stored revisions when list is a typed list of the kind's Go type and
// asks for no page.
func sharedList(w *World, ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, err := w.Store.kinds.forObject(list)
	if err != nil || isBindingKind(k) {
		return w.peek.List(ctx, list, opts...)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	items := typedItems(k, list)
	lm, isList := list.(metav1.ListInterface)
	if o.Limit > 0 || o.Continue != "" || !items.IsValid() || !isList {
		return w.peek.List(ctx, list, opts...)
	}
	lo := &ListOptions{Namespace: o.Namespace, Labels: o.LabelSelector, Fields: o.FieldSelector}
	if err := validateFieldSelector(lo.Fields); err != nil {
		return err
	}
	// The stored objects in key order, as the quorum read's selectSorted
	// gives them (storedList keeps the order per table version). A
	// quorum read makes the kind's table when it has none (StateHash
	// sees which tables exist): so does this one.
	w.Store.table(k)
	all := storedList(w, k, lo.Namespace)
	n := 0
	for _, obj := range all {
		if lo.matches(obj) {
			n++
		}
	}
	slice := reflect.MakeSlice(items.Type(), n, n)
	i := 0
	for _, obj := range all {
		if lo.matches(obj) {
			slice.Index(i).Set(reflect.ValueOf(obj).Elem())
			slice.Index(i).Addr().Interface().(client.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			i++
		}
	}
	list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	items.Set(slice)
	lm.SetResourceVersion(w.Store.rev.String())
	lm.SetContinue("")
	lm.SetRemainingItemCount(nil)
	return nil
}
