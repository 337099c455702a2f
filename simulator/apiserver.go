package simulator

import (
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// DefaultWatchWindow is how many events per resource type an apiserver's
// watch cache retains for watches that resume from an older revision; older
// than that gets 410 Gone (a real kube-apiserver keeps a bounded window too).
const DefaultWatchWindow = 100

// APIServer is one kube-apiserver over the shared store. Writes always go to
// the store (they are linearizable at etcd); cached reads are served from
// this apiserver's watch cache for the resource type, which sits at its own
// revision <= the store's. Each type has its own cache, so one type can lag
// while another is fresh; a paused cache (a partition, a stuck watch) keeps
// serving its old view.
type APIServer struct {
	ID     int // 1-based, as shown in traces: apiserver-1, apiserver-2
	store  *Store
	caches map[*kindInfo]*WatchCache
	// Window is the number of events per type retained for resuming watches.
	Window int
	// AutoSync makes every unpaused cache catch up with the store before it
	// serves a read. With it, caches lag only when paused; without it, the
	// caller advances them explicitly with Advance and Sync.
	AutoSync bool
	// cacheReader: a client of Cluster.Client reads this apiserver's
	// watch caches (not quorum), besides the controllers bound to it.
	cacheReader bool
}

// WatchCache is an apiserver's cache of one resource type: the state of that
// type as of revision Rev.
type WatchCache struct {
	kind    *kindInfo
	rev     model.Revision
	objects map[string]client.Object
	next    int // index into the kind's change list of the next change to apply
	paused  bool
}

// Rev is the revision the cache reflects: it has applied every change up to
// and including Rev.
func (w *WatchCache) Rev() model.Revision { return w.rev }

// Paused reports whether the cache stopped following the store.
func (w *WatchCache) Paused() bool { return w.paused }

// NewAPIServer returns apiserver id over store, with AutoSync on.
func NewAPIServer(id int, store *Store) *APIServer {
	return &APIServer{ID: id, store: store, caches: map[*kindInfo]*WatchCache{}, Window: DefaultWatchWindow, AutoSync: true}
}

// Store returns the store behind the apiserver.
func (a *APIServer) Store() *Store { return a.store }

// Cache returns the watch cache for kind k, creating it at the store's head
// if this apiserver has not served the kind before.
func (a *APIServer) Cache(k *kindInfo) *WatchCache {
	w := a.caches[k]
	if w == nil {
		w = &WatchCache{kind: k, objects: map[string]client.Object{}}
		a.caches[k] = w
		a.advance(w, a.store.rev)
	}
	return w
}

// CacheFor is Cache for the kind of a typed object.
func (a *APIServer) CacheFor(obj client.Object) (*WatchCache, error) {
	k, err := a.store.kinds.forObject(obj)
	if err != nil {
		return nil, err
	}
	return a.Cache(k), nil
}

// advance applies the kind's changes up to revision to.
func (a *APIServer) advance(w *WatchCache, to model.Revision) {
	changes := a.store.table(w.kind).changes
	for w.next < len(changes) && changes[w.next].Rev <= to {
		c := changes[w.next]
		if c.Type == model.ChangeDeleted {
			delete(w.objects, c.Key)
		} else {
			w.objects[c.Key] = c.Object
		}
		w.next++
	}
	if to > w.rev {
		w.rev = to
	}
}

// Sync brings a cache to the store's head, paused or not (resuming does
// this). It returns how many events the cache applied.
func (a *APIServer) Sync(w *WatchCache) int {
	before := w.next
	a.advance(w, a.store.rev)
	return w.next - before
}

// AdvanceOne applies the next pending event of the cache's kind, if any, and
// reports whether there was one. The cache's revision moves to that event's.
func (a *APIServer) AdvanceOne(w *WatchCache) bool {
	changes := a.store.table(w.kind).changes
	if w.next >= len(changes) {
		if w.rev < a.store.rev {
			w.rev = a.store.rev
		}
		return false
	}
	a.advance(w, changes[w.next].Rev)
	return true
}

// Pending is the number of events of the cache's kind the store has and the
// cache has not applied.
func (a *APIServer) Pending(w *WatchCache) int { return len(a.store.table(w.kind).changes) - w.next }

// Pause stops the cache at its current revision until Resume.
func (a *APIServer) Pause(w *WatchCache) { w.paused = true }

// Resume lets the cache follow the store again; with AutoSync it catches up
// at its next read.
func (a *APIServer) Resume(w *WatchCache) { w.paused = false }

// Caches returns the caches this apiserver has, in kind first-use order.
func (a *APIServer) Caches() []*WatchCache {
	out := make([]*WatchCache, 0, len(a.caches))
	for _, w := range a.caches {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].kind.order < out[j].kind.order })
	return out
}

func (a *APIServer) fresh(w *WatchCache) {
	if a.AutoSync && !w.paused && w.rev < a.store.rev {
		a.advance(w, a.store.rev)
	}
}

// read serves a Get. From the cache unless quorum; stale says whether the
// store already holds a different state of that key than the one served.
func (a *APIServer) read(k *kindInfo, namespace, name string, quorum bool) (client.Object, model.Revision, bool, error) {
	key := objectKey(k, namespace, name)
	head, inHead := a.store.peek(k, key)
	if quorum {
		if !inHead {
			return nil, a.store.rev, false, apierrors.NewNotFound(k.gr, name)
		}
		return head, a.store.rev, false, nil
	}
	w := a.Cache(k)
	a.fresh(w)
	obj, ok := w.objects[key]
	stale := ok != inHead || (ok && obj != head)
	if !ok {
		return nil, w.rev, stale, apierrors.NewNotFound(k.gr, name)
	}
	return obj, w.rev, stale, nil
}

// readList serves a List, from the cache unless quorum.
func (a *APIServer) readList(k *kindInfo, o *ListOptions, quorum bool) ([]client.Object, model.Revision, bool, error) {
	if err := validateFieldSelector(o.Fields); err != nil {
		return nil, 0, false, err
	}
	if quorum {
		return selectSorted(a.store.table(k).objects, o), a.store.rev, false, nil
	}
	w := a.Cache(k)
	a.fresh(w)
	// The list is stale when the kind changed after the cache's revision.
	stale := a.Pending(w) > 0
	return selectSorted(w.objects, o), w.rev, stale, nil
}

// Watch returns the events of the cache's kind after revision from, up to
// the cache's revision, as a resuming watch would receive them. A revision
// older than the retained window gets 410 Gone: the caller must relist.
func (a *APIServer) Watch(w *WatchCache, from model.Revision) ([]*Change, error) {
	a.fresh(w)
	changes := a.store.table(w.kind).changes[:w.next]
	i := sort.Search(len(changes), func(i int) bool { return changes[i].Rev > from })
	if a.Window > 0 && len(changes)-a.Window > i && i < len(changes) {
		oldest := changes[len(changes)-a.Window].Rev
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, oldest-1))
	}
	return changes[i:], nil
}
