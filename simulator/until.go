package simulator

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	m.noteKind(k)
}

func (m *untilMemo) noteKind(k *kindInfo) {
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
	k, objs, ok, err := storedSelection(w, list, opts)
	if err != nil {
		return err
	}
	if !ok {
		return w.peek.List(ctx, list, opts...)
	}
	defer clear(objs)
	items := typedItems(k, list)
	slice := reflect.MakeSlice(items.Type(), len(objs), len(objs))
	for i, obj := range objs {
		slice.Index(i).Set(reflect.ValueOf(obj).Elem())
		slice.Index(i).Addr().Interface().(client.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	items.Set(slice)
	lm := list.(metav1.ListInterface)
	lm.SetResourceVersion(w.Store.rev.String())
	lm.SetContinue("")
	lm.SetRemainingItemCount(nil)
	return nil
}

// storedSelection is what a quorum List of list's kind with opts answers,
// as the stored revisions themselves (to read, never modify), when list is
// a typed list of the kind's Go type and asks for no page; ok is false
// (and nothing is read) otherwise. It is the selection both sharedList
// (which shallow-copies it into list) and SharedList (which hands it out)
// make.
//
// objs is the world's selection array, filled again by the next
// selection: the callers copy out of it at once, and clear it.
func storedSelection(w *World, list client.ObjectList, opts []client.ListOption) (k *kindInfo, objs []client.Object, ok bool, err error) {
	k, err = w.Store.kinds.forObject(list)
	if err != nil || isBindingKind(k) {
		return nil, nil, false, nil
	}
	// The world's own options: applied through an interface, a new one
	// would escape. Copied out and cleared before anything else runs.
	w.selectionOptions.ApplyOptions(opts)
	o := w.selectionOptions
	w.selectionOptions = client.ListOptions{}
	if _, isList := list.(metav1.ListInterface); o.Limit > 0 || o.Continue != "" || !typedItems(k, list).IsValid() || !isList {
		return nil, nil, false, nil
	}
	lo := &ListOptions{Namespace: o.Namespace, Labels: o.LabelSelector, Fields: o.FieldSelector}
	if err := validateFieldSelector(lo.Fields); err != nil {
		return k, nil, false, err
	}
	// The stored objects in key order, as the quorum read's selectSorted
	// gives them (storedList keeps the order per table version). A
	// quorum read makes the kind's table when it has none (StateHash
	// sees which tables exist): so does this one.
	w.Store.table(k)
	objs = w.selection[:0]
	for _, obj := range storedList(w, k, lo.Namespace) {
		if lo.matches(obj) {
			objs = append(objs, obj)
		}
	}
	w.selection = objs
	return k, objs, true, nil
}

// SharedGet reads one object of Go type T (a kind's pointer type, e.g.
// *rayv1.RayCluster) for a workload step's Until condition. Through the
// reader Until is handed it copies nothing: the answer is the stored
// revision itself (apiVersion and kind set, as stored), to read and never
// modify, and the kind is noted as its Get would note it. Through any
// other reader it is a new T filled by r.Get. A condition that decides
// from a few fields of many objects after every change reads them so
// without a copy of each (the KubeRay scenarios' wait).
func SharedGet[T client.Object](ctx context.Context, r client.Reader, key client.ObjectKey) (T, error) {
	t := reflect.TypeFor[T]()
	if ur, ok := r.(untilReader); ok && t.Kind() == reflect.Pointer {
		w := ur.m.w
		if k, err := w.Store.kinds.forType(t); err == nil && !isBindingKind(k) && k.typ == t.Elem() {
			ur.m.noteKind(k)
			stored, ok := w.Store.peek(k, objectKey(k, key.Namespace, key.Name))
			if !ok {
				var none T
				return none, apierrors.NewNotFound(k.gr, key.Name)
			}
			return stored.(T), nil
		}
	}
	obj := reflect.New(t.Elem()).Interface().(T)
	err := r.Get(ctx, key, obj)
	return obj, err
}

// SharedList lists objects of Go type T for a workload step's Until
// condition: list is a typed list of T's kind (e.g. &corev1.PodList{}).
// Through the reader Until is handed, with no Limit or Continue, it copies
// nothing: the answer is the stored revisions themselves, in the order
// List gives them, to read and never modify, and list is left empty (the
// kind is noted as its List would note it). Through any other reader it is
// r.List into list and the addresses of its items.
func SharedList[T client.Object](ctx context.Context, r client.Reader, list client.ObjectList, opts ...client.ListOption) ([]T, error) {
	if ur, ok := r.(untilReader); ok {
		k, objs, ok, err := storedSelection(ur.m.w, list, opts)
		if k != nil {
			ur.m.noteKind(k)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			defer clear(objs)
			return itemsAs[T](objs, list)
		}
	}
	if err := r.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	return itemsAs[T](items, list)
}

// itemsAs is objs as T, or an error naming list when an item is not a T.
func itemsAs[T client.Object, O runtime.Object](objs []O, list client.ObjectList) ([]T, error) {
	out := make([]T, len(objs))
	for i, o := range objs {
		t, isT := any(o).(T)
		if !isT {
			return nil, fmt.Errorf("opcheck: SharedList of %T items from a %T: want the list of T's kind", o, list)
		}
		out[i] = t
	}
	return out, nil
}
