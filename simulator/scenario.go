package simulator

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

// Scenario is everything one exploration needs: the types, the objects to
// start with, the controllers under test, the workload, the number of
// apiservers, the fault budget and the properties to check. A scenario is a
// value: every run builds a fresh world from it.
type Scenario struct {
	Name        string
	Description string
	Scheme      *runtime.Scheme
	// StoreOptions declare cluster-scoped CRD kinds and CRDs without a
	// status subresource.
	StoreOptions StoreOptions
	// APIServers is the number of apiservers (default 1).
	APIServers int
	// Objects are stored before the run starts, status included.
	Objects     []client.Object
	Controllers []ControllerSpec
	Workload    []WorkloadStep
	Faults      model.FaultBudget
	// StaleKinds are the types whose apiserver caches a stale fault may
	// pause (default: every controller's For type).
	StaleKinds []client.Object
	// Actors builds the external systems of one run (a ZooKeeper ensemble,
	// Cassandra node agents); the built-in actors are always present
	// unless NoBuiltins is set.
	Actors     func(w *World) []Actor
	NoBuiltins bool
	Properties []properties.Property
	// MaxSteps bounds one schedule (default DefaultMaxSteps).
	MaxSteps int
	// QuietPeriod is how long (logical time) the settle phase waits with no
	// store change, when only the clock is left to move, before it calls the
	// world quiescent (default DefaultQuietPeriod).
	QuietPeriod model.Time
	// ClockAnytime lets the clock advance while other steps are enabled.
	// By default time passes only when nothing else can happen, which
	// explores every ordering of actions but not every ordering of actions
	// against timers.
	ClockAnytime bool
	// SyncWallClock makes the wall clock follow the logical clock, for
	// unmodified code that reads time.Now (KubeRay's scale-expectation
	// timeout): World.Run runs the schedule inside a testing/synctest
	// bubble of its own, whose fake clock only moves when every goroutine
	// of the bubble waits, and every Tick sleeps by the logical delta, so
	// the sleep takes no real time and time.Now reads exactly as much
	// elapsed time as the logical clock.
	SyncWallClock bool
	// KnownNondeterminism, when set, says why the same choices may give
	// histories that differ in more than wall-clock timestamps: unmodified
	// code that orders its API calls by Go map iteration (KubeRay's
	// expectation checks read pods in the order of a client-go indexer's
	// set). Determinism checks skip such scenarios and say so.
	KnownNondeterminism string
	// OpaqueResourceVersions declares that the controllers under test,
	// the workload and the external systems use resourceVersions as the
	// API conventions ask: as opaque tokens they pass back (an update's
	// precondition) or compare for equality, never parse, order or copy
	// into an object. The exhaustive search may then merge two states
	// whose objects have the same contents at different resourceVersions
	// (the same writes in another order, or one status write more). By
	// default it does not: its fingerprint (World.StateHash) holds every
	// resourceVersion and the head revision, so that a controller that
	// orders them, as zookeeper-operator's owner-rv staleness guard does,
	// is explored soundly. Declaring it for such a controller makes the
	// search merge states with different futures: it may miss outcomes.
	OpaqueResourceVersions bool
}

// WorkloadStep is one user action: Do runs once the previous step's Until
// held; the workload moves on once this step's Until holds on ground truth.
//
// A Do that fails with an error Retry accepts is run again, as a user
// re-running kubectl would: at the next step after a Conflict, one
// DefaultRetryDelay (logical) later after any other error (an
// AlreadyExists while the old object is still terminating, a NotFound
// while a cache catches up). Any other error is a harness error: the
// scenario is wrong.
//
// Timeout bounds, in logical time, both the retries of Do (from its first
// attempt) and the wait for Until (from the Do that succeeded). When it
// runs out the user gives up and moves on, and the run reports the finding
// WorkloadStuck, unless a property already explains the run or a fault was
// still in force at the time: a paused watch cache, or an informer that lost
// an event and has not relisted (both last until the faults end, so no
// progress could be expected).
//
// Until must only read what its reader fills in: a typed object or list
// item shares its maps, slices and pointers with the store's revision
// (shallow copies; the condition is asked after every change of a kind it
// read). DeepCopy before changing anything.
type WorkloadStep struct {
	Name  string
	Do    func(ctx context.Context, c client.Client) error
	Until func(ctx context.Context, r client.Reader) bool
	// Timeout is the step's patience (default DefaultWaitTimeout).
	Timeout model.Time
	// Retry says which errors of Do are retried (default DefaultRetry).
	Retry func(err error) bool
}

// DefaultRetry is the retry policy of a workload step without one: the
// errors a real cluster gives a correct command now and then, Conflict,
// AlreadyExists and NotFound.
func DefaultRetry(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err)
}

// DefaultRetryDelay is how long (logical time) the user waits before
// running a Do again after an error other than a Conflict.
const DefaultRetryDelay = model.Time(1000)

// WorkloadStuck is the finding of a workload step whose Timeout ran out:
// its Do kept failing, or its Until never held.
const WorkloadStuck = "WorkloadStuck"

func (st *WorkloadStep) timeout() model.Time {
	if st.Timeout > 0 {
		return st.Timeout
	}
	return DefaultWaitTimeout
}

func (st *WorkloadStep) retry(err error) bool {
	if st.Retry != nil {
		return st.Retry(err)
	}
	return DefaultRetry(err)
}

// Defaults.
const (
	DefaultMaxSteps    = 3000
	DefaultQuietPeriod = model.Time(5 * 60 * 1000)
)

func (s *Scenario) maxSteps() int {
	if s.MaxSteps > 0 {
		return s.MaxSteps
	}
	return DefaultMaxSteps
}

func (s *Scenario) quietPeriod() model.Time {
	if s.QuietPeriod > 0 {
		return s.QuietPeriod
	}
	return DefaultQuietPeriod
}
