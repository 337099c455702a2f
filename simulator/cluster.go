package simulator

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// Cluster is the still picture of a simulated control plane: one store, N
// apiservers over it, the logical clock and the history every API call is
// recorded into. The world (world.go) sets it in motion.
type Cluster struct {
	Store   *Store
	Servers []*APIServer
	Clock   *model.Clock
	History model.History
	// OnEvent, when set, sees every event as it is recorded (the explorer
	// checks properties online through it).
	OnEvent func(e *model.Event)
	// reconciles counts the reconciles the cluster's hosts started
	// (Result.Reconciles).
	reconciles int
}

// ClusterOptions configure a cluster.
type ClusterOptions struct {
	// APIServers is the number of apiservers (default 1).
	APIServers int
	// Events is the history's initial capacity, a hint: a world's runs
	// record hundreds of events, and growing the slice from nothing
	// copies it again at every doubling.
	Events int
	StoreOptions
	// kinds, when set, is the registry the store starts with (a
	// checkpoint's: Checkpoint.Resume).
	kinds *kindRegistry
}

// worldEvents is the history capacity a world starts with: the shipped
// scenarios record about 330-550 events per random schedule.
const worldEvents = 512

// NewCluster builds an empty cluster over scheme.
func NewCluster(scheme *runtime.Scheme, opts ClusterOptions) *Cluster {
	n := opts.APIServers
	if n < 1 {
		n = 1
	}
	c := &Cluster{Clock: &model.Clock{}}
	if opts.Events > 0 {
		c.History.Events = recycledHistory(opts.Events)
	}
	c.Store = newStore(scheme, c.Clock, opts.StoreOptions, opts.kinds)
	for i := 1; i <= n; i++ {
		c.Servers = append(c.Servers, NewAPIServer(i, c.Store))
	}
	return c
}

// historyArrays holds the event arrays of released runs (Result.Release),
// cleared, for the next cluster built with an Events hint: a schedule's
// history is a sixth of the bytes it allocates, and an array grown past the
// hint by one run fits the next without growing again.
var historyArrays sync.Pool // of *[]model.Event, length 0

// recycledHistory returns an empty history array of capacity at least n:
// a released one when there is one, else a new one.
func recycledHistory(n int) []model.Event {
	if p, ok := historyArrays.Get().(*[]model.Event); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]model.Event, 0, n)
}

// recycleHistory clears events and keeps the array for recycledHistory.
// The caller promises that nothing reads it again (Result.Release).
func recycleHistory(events []model.Event) {
	if cap(events) == 0 {
		return
	}
	clear(events)
	events = events[:0]
	historyArrays.Put(&events)
}

// Server returns apiserver id (1-based).
func (c *Cluster) Server(id int) *APIServer {
	if id < 1 || id > len(c.Servers) {
		panic(fmt.Sprintf("simulator: apiserver-%d does not exist (the cluster has %d)", id, len(c.Servers)))
	}
	return c.Servers[id-1]
}

// Record appends an event to the history, numbering it and stamping it with
// the logical time.
func (c *Cluster) Record(e model.Event) {
	e.Step = len(c.History.Events) + 1
	e.Time = c.Clock.Now()
	c.History.Events = append(c.History.Events, e)
	if c.OnEvent != nil {
		c.OnEvent(&c.History.Events[len(c.History.Events)-1])
	}
}

// Client returns a client.Client for actor talking to apiserver id. Its
// reads are served from that apiserver's watch caches (as an informer's
// list would be) unless quorum is set.
func (c *Cluster) Client(actor model.Actor, id int, quorum bool) *Client {
	if !quorum {
		c.Server(id).cacheReader = true
	}
	return &Client{
		cluster: c,
		server:  c.Server(id),
		actor:   actor,
		reads:   serverReads{server: c.Server(id), quorum: quorum},
	}
}

// Seed stores initial objects with their status as given and records them
// as the user's creations.
func (c *Cluster) Seed(objs ...client.Object) error {
	for _, obj := range objs {
		head := c.Store.Revision()
		ch, err := c.Store.Seed(obj)
		if err != nil {
			return fmt.Errorf("seeding %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
		c.Record(model.Event{Actor: model.ActorUser, Op: model.OpCreate, Kind: ch.KindName(), Namespace: ch.Object.GetNamespace(), Name: ch.Object.GetName(), HeadRev: head, Rev: ch.Rev, Change: ch.Type, Object: ch.Object, Detail: "seed"})
	}
	return nil
}

// kindOf resolves the kind of a typed prototype or panics: a scenario that
// names an unregistered type is a harness error caught at world build.
func (c *Cluster) kindOf(proto client.Object) *kindInfo {
	k, err := c.Store.kinds.forObject(proto)
	if err != nil {
		panic(fmt.Errorf("%T is not a kind of the scenario's scheme: add its AddToScheme to the scheme (%w)", proto, err))
	}
	return k
}
