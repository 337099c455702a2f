package simulator

import (
	"context"

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
}

// WorkloadStep is one user action: Do runs once the previous step's Until
// held; the workload moves on once this step's Until holds on ground truth.
// A Do that fails with a conflict is retried at a later step.
type WorkloadStep struct {
	Name  string
	Do    func(ctx context.Context, c client.Client) error
	Until func(ctx context.Context, r client.Reader) bool
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
