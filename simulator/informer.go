package simulator

import (
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// informer is a controller's cache of one type: it lists from its
// apiserver's watch cache (so a restarted controller starts from whatever
// that cache holds, stale or not), then receives the watch events that
// cache emits, one delivery step at a time. Objects are the store's
// immutable ones, shared; reads copy.
type informer struct {
	kind    *kindInfo
	server  *APIServer
	cache   *WatchCache
	rev     model.Revision
	objects map[string]client.Object
	// dropped marks pending events a drop fault took away: delivery skips
	// them.
	dropped map[*Change]bool
}

func newInformer(k *kindInfo, server *APIServer) *informer {
	inf := &informer{kind: k, server: server, cache: server.Cache(k), dropped: map[*Change]bool{}}
	inf.relist()
	return inf
}

// relist replaces the informer's contents with the apiserver cache's.
func (inf *informer) relist() {
	inf.server.fresh(inf.cache)
	inf.objects = make(map[string]client.Object, len(inf.cache.objects))
	for key, obj := range inf.cache.objects {
		inf.objects[key] = obj
	}
	inf.rev = inf.cache.rev
}

// list returns the informer's objects in key order.
func (inf *informer) list() []client.Object { return selectSorted(inf.objects, &ListOptions{}) }

// pending returns the watch events the apiserver has for the informer and
// the informer has not received. If the informer fell out of the apiserver's
// window it relists (as a reflector does on 410) and returns nil with
// relisted true.
func (inf *informer) pending() (changes []*Change, relisted bool) {
	ch, err := inf.server.Watch(inf.cache, inf.rev)
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			inf.relist()
			return nil, true
		}
		panic(err)
	}
	return ch, false
}

// apply receives one watch event and returns the object's previous state.
func (inf *informer) apply(c *Change) client.Object {
	old := inf.objects[c.Key]
	if c.Type == model.ChangeDeleted {
		delete(inf.objects, c.Key)
	} else {
		inf.objects[c.Key] = c.Object
	}
	inf.rev = c.Rev
	return old
}

// skip loses one watch event: the informer moves past it without seeing it.
func (inf *informer) skip(c *Change) { inf.rev = c.Rev }

func (inf *informer) read(namespace, name string) (client.Object, model.Revision, bool, error) {
	key := objectKey(inf.kind, namespace, name)
	obj, ok := inf.objects[key]
	head, inHead := inf.server.store.peek(inf.kind, key)
	stale := ok != inHead || (ok && obj != head)
	if !ok {
		return nil, inf.rev, stale, apierrors.NewNotFound(inf.kind.gr, name)
	}
	return obj, inf.rev, stale, nil
}

func (inf *informer) readList(o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	if err := validateFieldSelector(o.Fields); err != nil {
		return nil, 0, false, err
	}
	changes := inf.server.store.table(inf.kind).changes
	stale := len(changes) > 0 && changes[len(changes)-1].Rev > inf.rev
	return selectSorted(inf.objects, o), inf.rev, stale, nil
}

// hasPending reports whether the apiserver holds watch events the informer
// has not received (or the informer must relist).
func (inf *informer) hasPending() bool {
	inf.server.fresh(inf.cache)
	changes := inf.server.store.table(inf.kind).changes[:inf.cache.next]
	return len(changes) > 0 && changes[len(changes)-1].Rev > inf.rev
}

// droppable returns the first pending event that a later pending event of
// the same object supersedes, and that is not dropped already: the events a
// drop fault may take away.
func (inf *informer) droppable() *Change {
	inf.server.fresh(inf.cache)
	changes := inf.server.store.table(inf.kind).changes[:inf.cache.next]
	i := sort.Search(len(changes), func(i int) bool { return changes[i].Rev > inf.rev })
	pending := changes[i:]
	for a, c := range pending {
		if inf.dropped[c] {
			continue
		}
		for _, later := range pending[a+1:] {
			if later.Key == c.Key {
				return c
			}
		}
	}
	return nil
}
