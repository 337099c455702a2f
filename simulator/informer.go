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
// cache emits, one event per delivery step, as client-go's reflector feeds
// its store and handlers. Objects are the store's immutable ones, shared;
// reads copy.
type informer struct {
	kind    *kindInfo
	server  *APIServer
	cache   *WatchCache
	rev     model.Revision
	objects map[string]client.Object
	// lost: a drop fault took an event away; the objects may be wrong
	// until the next relist (a restart, or a watch expiry with 410).
	lost bool
	// table is the store's table of the kind (a store never replaces a
	// table once made): hasPending reads it at every decision.
	table *kindData
}

func newInformer(k *kindInfo, server *APIServer) *informer {
	inf := &informer{kind: k, server: server, cache: server.Cache(k), table: server.store.table(k)}
	inf.relist()
	return inf
}

// relist replaces the informer's contents with the apiserver cache's; it
// heals whatever drop faults made the informer lose.
func (inf *informer) relist() {
	inf.server.fresh(inf.cache)
	inf.objects = make(map[string]client.Object, len(inf.cache.objects))
	for key, obj := range inf.cache.objects {
		inf.objects[key] = obj
	}
	inf.rev = inf.cache.rev
	inf.lost = false
}

// relistChanges relists and returns what changed as (old, new) pairs in key
// order, the notifications a reflector's Replace produces: an object new
// or different in the list (old nil when new), and, with new nil, an
// object the informer held that the list no longer has (its deletion was
// missed).
func (inf *informer) relistChanges() (olds, news []client.Object) {
	before := inf.objects
	inf.relist()
	keys := make([]string, 0, len(before)+len(inf.objects))
	for k := range before {
		keys = append(keys, k)
	}
	for k := range inf.objects {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, n := before[k], inf.objects[k]
		if o == n {
			continue
		}
		olds, news = append(olds, o), append(news, n)
	}
	return olds, news
}

// list returns the informer's objects in key order.
func (inf *informer) list() []client.Object { return selectSorted(inf.objects, &ListOptions{}) }

// next returns the first watch event the apiserver has for the informer
// that it has not received. If the informer fell out of the apiserver's
// window it must relist (as a reflector does on 410): next returns nil,
// true.
func (inf *informer) next() (c *Change, mustRelist bool) {
	ch, err := inf.server.Watch(inf.cache, inf.rev)
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return nil, true
		}
		panic(err)
	}
	if len(ch) == 0 {
		return nil, false
	}
	return ch[0], false
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
func (inf *informer) skip(c *Change) {
	inf.rev = c.Rev
	inf.lost = true
}

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
	changes := inf.table.changes[:inf.cache.next]
	return len(changes) > 0 && changes[len(changes)-1].Rev > inf.rev
}
