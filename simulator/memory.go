package simulator

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// reconcilerMemory is the digest of everything one incarnation of a
// controller that keeps memory between reconciles
// (ControllerSpec.KeepsMemory) was told: the answer of each of its API
// calls (the content, resourceVersion or error returned), each external
// call with the external systems' state before it, each watch event
// delivered to it, each reconcile's request and result, and the time of
// each. A deterministic reconciler's memory is a function of those, so two
// incarnations with the same digest remember the same things, whatever
// they keep; World.StateHash adds the digest, and the exhaustive search
// merges no two states whose controllers may remember differently.
//
// Reads between two other events are added in any order (a sum):
// KubeRay's reconciler reads the pods its expectations name in Go map
// order (Scenario.KnownNondeterminism), and the same answers in another
// order must give the same digest, or the same state would fingerprint
// differently from run to run. A deterministic reconciler reads in an
// order its earlier answers decide, which the digest holds already.
//
// It leaves out the reads a relist makes for the informer (no reconciler
// code sees them; its content is in the fingerprint anyway).
type reconcilerMemory struct {
	sources *memorySources
	ordered uint64 // every event but reads, in order (each after the reads before it)
	reads   uint64 // the sum of the reads since the last other event
	pending uint64 // the content of the answer the next recorded event carries
}

// memorySources are the world's hashes a digest reads: an object's
// content (World's cached content hash) and the external systems' state.
type memorySources struct {
	content   func(client.Object) uint64
	externals func() uint64
}

// answer adds the content of an object the next recorded event returns
// (a Get's object, a List's items in order, a delivered watch event's).
func (m *reconcilerMemory) answer(obj client.Object) {
	m.pending = mix64(m.pending ^ m.sources.content(obj))
}

// external adds the external systems' state before an external call: its
// answer depends on it, and the event records only the call's summary.
func (m *reconcilerMemory) external() {
	m.pending = mix64(m.pending ^ m.sources.externals())
}

// observe adds an event the incarnation recorded.
func (m *reconcilerMemory) observe(e *model.Event) {
	h := eventHash(e) ^ m.pending
	if e.Object != nil {
		if obj, ok := e.Object.(client.Object); ok {
			h = mix64(h ^ m.sources.content(obj))
		}
	}
	m.pending = 0
	if e.Op == model.OpGet || e.Op == model.OpList {
		m.reads += mix64(h)
		return
	}
	m.ordered = mix64(m.ordered ^ m.reads)
	m.ordered = mix64(m.ordered*0x100000001b3 ^ h)
	m.reads = 0
}

// digest is what StateHash adds for the incarnation.
func (m *reconcilerMemory) digest() uint64 { return mix64(m.ordered ^ mix64(m.reads)) }

// eventHash hashes what an event says a controller was told: everything
// but what its code cannot see (the event's position in the history, the
// store's head, the apiserver that served it, whether the read was stale,
// and the cache revision a Get was served at; a List's is its list's
// resourceVersion, which the code sees). FNV-1a, written out: it runs for
// every event of such a controller, and hash/fnv's would allocate each
// time.
func eventHash(e *model.Event) uint64 {
	h := uint64(fnvOffset64)
	put := func(v uint64) {
		for i := 0; i < 8; i++ {
			h = (h ^ (v >> (8 * i) & 0xff)) * fnvPrime64
		}
	}
	putS := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * fnvPrime64
		}
		h *= fnvPrime64 // the terminating zero byte
	}
	putS(string(e.Op))
	putS(e.Kind)
	putS(e.Namespace)
	putS(e.Name)
	if e.Op == model.OpList {
		put(uint64(e.ReadRev))
	}
	put(uint64(e.Rev))
	put(uint64(len(e.Versions)))
	for _, v := range e.Versions {
		putS(v.Name)
		put(uint64(v.Rev))
	}
	putS(e.Err)
	putS(e.Detail)
	put(uint64(e.Change))
	put(uint64(e.Time))
	return h
}

// FNV-1a's 64-bit parameters (contenthash.go hashes with them too).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// mix64 is the splitmix64 finalizer: a sum of mixed terms keeps them apart.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}
